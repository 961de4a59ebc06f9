//! Code generation, one file per generated impl. It runs only on an IR that passed `check`,
//! and cannot fail. What it writes down is data and calls into the generic runtime
//! (`ddb_model::__private`): key templates as `EntityKeys` / `IndexKeys`, level types that
//! wrap `LevelQuery`, one-line methods that delegate.
//!
//! - `checks.rs`: compile-time assertions at the user's spans (the table agrees);
//! - `keys.rs`: the key templates as data, `E::key(..)` and `E::parse_key(..)`;
//! - `entity.rs`: `impl Entity`;
//! - `fields.rs`: the typed attribute paths (`User::EMAIL`);
//! - `repo.rs`: `get`, `put`, `update`, ...;
//! - `query.rs`: query constructors and the level types;
//! - `vector.rs`: vector searches (`nearest`) and their checks;
//! - `hierarchy.rs`, `edge.rs`, `table.rs`, `key_part.rs`, `collection.rs`,
//!   `projection.rs`: their derives.

mod checks;
mod collection;
mod edge;
mod entity;
mod fields;
mod hierarchy;
mod key_part;
mod keys;
mod multi_query;
mod projection;
mod query;
mod repo;
mod rules;
mod table;
mod vector;

use proc_macro2::{Delimiter, TokenStream, TokenTree};
use quote::{ToTokens, quote};

use crate::ast::Entity;

pub use collection::expand as collection;
pub use edge::expand as edge;
pub use key_part::expand as key_part;
pub use projection::expand as projection;
pub use table::expand as table;

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

/// The entity's table type.
fn table_of(entity: &Entity) -> TokenStream {
    match &entity.table {
        Some(path) => path.to_token_stream(),
        None => quote! { ::ddb_model::__private::DefaultTable },
    }
}

/// `Db<Table>` of the entity's table (`Db` for the default table, its default parameter).
fn db_of(entity: &Entity) -> TokenStream {
    match &entity.table {
        Some(path) => quote! { __ddb::Db<#path> },
        None => quote! { __ddb::Db },
    }
}

/// What one part of the expansion adds: items of the entity's one inherent `impl E { .. }`,
/// and other items.
#[derive(Default)]
struct Items {
    inherent: TokenStream,
    other: TokenStream,
}

pub fn entity(entity: &Entity) -> TokenStream {
    let (table, db) = (table_of(entity), db_of(entity));
    let query_types = query::types(entity);
    let multi_types = multi_query::types(entity);
    let checks = checks::expand(entity);
    let multi_checks = multi_query::checks(entity);
    let multi = multi_query::expand(entity, &db);
    let keys = keys::expand(entity);
    let fields = fields::expand(entity);
    let repo = repo::expand(entity, &db);
    let hierarchy = hierarchy::expand(entity, &db);
    let queries = query::expand(entity, &db);
    let vectors = vector::expand(entity, &db);
    let ident = entity.ident;
    let (key_fns, tree_fn, query_fns) = (&keys.inherent, &hierarchy.inherent, &queries.inherent);
    // The shape names the access methods as generated, so that no tool can miss one.
    let inherent = [&repo, query_fns, &multi.inherent, &vectors.inherent, tree_fn];
    let methods: Vec<String> = inherent.into_iter().flat_map(access_methods).collect();
    let entity_impl = entity::expand(entity, &table, &methods);
    let (key_consts, tree_items, level_items) = (&keys.other, &hierarchy.other, &queries.other);
    let (multi_fns, multi_items) = (&multi.inherent, &multi.other);
    let (vector_fns, vector_items) = (&vectors.inherent, &vectors.other);
    let items = wrap(quote! {
        #checks
        #multi_checks
        #key_consts
        #entity_impl
        impl #ident {
            #key_fns
            #fields
            #repo
            #query_fns
            #multi_fns
            #vector_fns
            #tree_fn
        }
        #tree_items
        #level_items
        #multi_items
        #vector_items
    });
    quote! {
        #query_types
        #multi_types
        #items
    }
}

/// The names of the functions of `items` that take a `db` parameter: the access methods
/// (`get`, `query_gsi1`, `nearest`, `tree`, ...), in order.
fn access_methods(items: &TokenStream) -> Vec<String> {
    let mut out = Vec::new();
    let mut tokens = items.clone().into_iter();
    while let Some(token) = tokens.next() {
        if !matches!(&token, TokenTree::Ident(i) if i == "fn") {
            continue;
        }
        let Some(TokenTree::Ident(name)) = tokens.next() else { continue };
        let params = tokens.find_map(|t| match t {
            TokenTree::Group(g) if g.delimiter() == Delimiter::Parenthesis => Some(g.stream()),
            _ => None,
        });
        let db = |t: TokenTree| matches!(&t, TokenTree::Ident(i) if i == "db");
        if params.is_some_and(|p| p.into_iter().any(db)) {
            out.push(name.to_string());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    /// The shape's method list is read from the generated functions: every one taking a `db`.
    #[test]
    fn shape_names_the_access_methods() {
        let input: syn::DeriveInput = syn::parse_quote! {
            #[entity(table = App, pk = "USER#<id>", sk = "PROFILE")]
            #[index(gsi1, pk = "ORG#<org>", sk = "USER#<name>", query = members)]
            #[index(by_org, pk = [org], sk = [name])]
            struct Member { id: String, org: String, name: String, #[vector(by_look)] look: Vec<f32> }
        };
        let code = crate::entity(&input).map(|c| c.to_string()).unwrap_or_default();
        let want = "get create put replace update delete query partition query_members \
                    partition_members query_by_org partition_by_org nearest_by_look nearest";
        assert!(code.contains(&format!("7:methods{}:{want}", want.len())), "{code}");
    }
}
