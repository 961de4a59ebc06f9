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
mod table;
mod vector;

use proc_macro2::TokenStream;
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
        None => quote! { ::ddb_model::DefaultTable },
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
    let entity_impl = entity::expand(entity, &table);
    let fields = fields::expand(entity);
    let repo = repo::expand(entity, &db);
    let hierarchy = hierarchy::expand(entity, &db);
    let queries = query::expand(entity, &db);
    let vectors = vector::expand(entity, &db);
    let ident = entity.ident;
    let (key_fns, tree_fn, query_fns) = (&keys.inherent, &hierarchy.inherent, &queries.inherent);
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
