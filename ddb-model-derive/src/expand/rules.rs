//! The data rules on `impl Entity`: `STRICT` (the attribute names the fields are read from),
//! `VALIDATE` and `AFTER_READ` (the hooks, called through fn pointers at the paths' spans, so
//! a wrong signature is reported there), and the generated ids (`generate_ids`,
//! `unset_generated`, through `GeneratedFns` at the field type's span).

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;

use crate::ast::Entity;

pub fn expand(entity: &Entity) -> TokenStream {
    let strict = entity.strict.as_ref().map(|_| {
        let mut names: Vec<&str> = Vec::new();
        let read = entity.fields.iter().filter(|f| f.computed.is_none() && !f.skip_deserializing);
        for field in read {
            for name in std::iter::once(&field.attr_name).chain(&field.aliases) {
                if !names.contains(&name.as_str()) {
                    names.push(name);
                }
            }
        }
        quote! {
            const STRICT: __ddb::Option<&'static [&'static str]> = __ddb::Some(&[#(#names),*]);
        }
    });
    let validate = entity.validate.as_ref().map(|path| {
        quote_spanned! {path.span()=>
            const VALIDATE: __ddb::Option<__ddb::ValidateFn<Self>> =
                __ddb::Some(|__value: &Self| #path(__value).map_err(__ddb::hook_error));
        }
    });
    let after_read = entity.after_read.as_ref().map(|path| {
        quote_spanned! {path.span()=>
            const AFTER_READ: __ddb::Option<fn(&mut Self)> =
                __ddb::Some(|__value: &mut Self| #path(__value));
        }
    });
    let generated = generated(entity);
    quote! { #strict #validate #after_read #generated }
}

fn generated(entity: &Entity) -> Option<TokenStream> {
    let fields: Vec<_> = entity.fields.iter().filter(|f| f.generated.is_some()).collect();
    if fields.is_empty() {
        return None;
    }
    let fns: Vec<TokenStream> = fields
        .iter()
        .map(|f| {
            let ty = f.ty;
            quote_spanned! {ty.span()=> __ddb::generated_fns::<#ty>() }
        })
        .collect();
    let idents: Vec<_> = fields.iter().map(|f| f.ident).collect();
    let kinds = fields.iter().map(|f| match f.generated.as_ref() {
        Some(kind) if kind == "ulid" => quote! { __ddb::IdKind::Ulid },
        _ => quote! { __ddb::IdKind::Uuid7 },
    });
    let attrs = fields.iter().map(|f| &f.attr_name);
    Some(quote! {
        fn generate_ids(&mut self) {
            #(
                if (#fns.is_unset)(&self.#idents) {
                    (#fns.generate)(&mut self.#idents, #kinds);
                }
            )*
        }

        fn unset_generated(&self) -> __ddb::Option<&'static str> {
            #(
                if (#fns.is_unset)(&self.#idents) {
                    return __ddb::Some(#attrs);
                }
            )*
            __ddb::None
        }
    })
}
