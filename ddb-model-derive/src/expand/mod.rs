//! Code generation. Runs only after the input passed validation.

mod checks;
mod collection;
mod edge;
mod fields;
mod hierarchy;
mod key_part;
mod keys;
mod query;
mod repo;
mod table;

use proc_macro2::TokenStream;
use quote::quote;
use syn::DeriveInput;

use crate::ast::Entity;
use crate::check;
use crate::ctxt::Ctxt;

pub use collection::derive as collection;
pub use edge::derive as edge;
pub use key_part::derive as key_part;
pub use table::derive as table;

/// Wraps generated items in `const _: () = { ... };` with the runtime's private path in scope.
fn wrap(items: TokenStream) -> TokenStream {
    quote! {
        #[doc(hidden)]
        #[allow(non_upper_case_globals, unused_qualifications, clippy::all)]
        const _: () = {
            use ::ddb_model::__private as __ddb;
            #items
        };
    }
}

pub fn entity(input: &DeriveInput) -> Result<TokenStream, syn::Error> {
    let mut cx = Ctxt::default();
    let entity = Entity::from_ast(&mut cx, input);
    if let Some(entity) = &entity {
        check::check(&mut cx, entity);
    }
    cx.check()?;
    let Some(entity) = entity else {
        return Err(syn::Error::new_spanned(&input.ident, "invalid entity"));
    };

    let table = match &entity.table {
        Some(path) => quote! { #path },
        None => quote! { ::ddb_model::DefaultTable },
    };
    let checks = checks::expand(&entity);
    let keys = keys::expand(&entity, &table);
    let fields = fields::expand(&entity);
    let repo = repo::expand(&entity, &table);
    let hierarchy = hierarchy::expand(&entity, &table);
    let (query_types, queries) = query::expand(&entity, &table);
    let items = wrap(quote! {
        #checks
        #keys
        #fields
        #repo
        #hierarchy
        #queries
    });
    Ok(quote! {
        #query_types
        #items
    })
}
