//! Derive macros of [ddb-model](https://docs.rs/ddb-model). Use them through that crate:
//! `ddb_model::Entity`, `ddb_model::Table`, `ddb_model::KeyPart`, `ddb_model::Collection`,
//! `ddb_model::Projection`, `ddb_model::Edge`.
//!
//! Every derive runs the same three steps:
//!
//! 1. **parse** (`attr/`, one file per attribute family, and `template.rs`) into the IR of
//!    `ast/`, resolving the fields the attributes name;
//! 2. **check** (`check/`) the rules between the parts of the IR. Every error goes into one
//!    `Ctxt`, so one compile shows every mistake, each at the smallest span that is wrong;
//! 3. **expand** (`expand/`), only when there was no error. Expansion cannot fail: it writes
//!    down the IR as calls into the generic runtime of `ddb_model::__private`.

mod ast;
mod attr;
mod check;
mod ctxt;
mod expand;
mod template;

#[cfg(test)]
mod generated_size;

use proc_macro::TokenStream;
use syn::{DeriveInput, parse_macro_input};

use crate::ctxt::Ctxt;

/// Derives `ddb_model::Entity`. See the ddb-model crate documentation.
#[proc_macro_derive(
    Entity,
    attributes(entity, index, hierarchy, vector, unique, generated, encrypt, sign_only)
)]
pub fn derive_entity(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    entity(&input).unwrap_or_else(syn::Error::into_compile_error).into()
}

/// Derives `ddb_model::Table`. See the ddb-model crate documentation.
#[proc_macro_derive(Table, attributes(table))]
pub fn derive_table(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    table(&input).unwrap_or_else(syn::Error::into_compile_error).into()
}

/// Derives `ddb_model::Collection`. See the ddb-model crate documentation.
#[proc_macro_derive(Collection, attributes(collection))]
pub fn derive_collection(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    collection(&input).unwrap_or_else(syn::Error::into_compile_error).into()
}

/// Derives `ddb_model::Projection` on a struct of some of an entity's fields. See the
/// ddb-model crate documentation.
#[proc_macro_derive(Projection, attributes(projection))]
pub fn derive_projection(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    projection(&input).unwrap_or_else(syn::Error::into_compile_error).into()
}

/// Derives `ddb_model::KeyPart`. See the ddb-model crate documentation.
#[proc_macro_derive(KeyPart, attributes(key_part))]
pub fn derive_key_part(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    key_part(&input).unwrap_or_else(syn::Error::into_compile_error).into()
}

/// Derives `ddb_model::Edge` on an entity (next to `#[derive(Entity)]`). See the ddb-model
/// crate documentation, module `edge`.
#[proc_macro_derive(Edge, attributes(edge))]
pub fn derive_edge(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    edge(&input).unwrap_or_else(syn::Error::into_compile_error).into()
}

type Expanded = syn::Result<proc_macro2::TokenStream>;

fn entity(input: &DeriveInput) -> Expanded {
    let mut cx = Ctxt::default();
    let entity = ast::Entity::from_ast(&mut cx, input);
    if let Some(entity) = &entity {
        check::entity(&mut cx, entity);
    }
    Ok(expand::entity(&cx.check_value(entity, &input.ident)?))
}

fn edge(input: &DeriveInput) -> Expanded {
    // `#[derive(Entity)]` reports the entity's own mistakes: an edge is only checked and
    // generated on a valid entity, so that no mistake is reported twice.
    let mut quiet = Ctxt::default();
    let entity = ast::Entity::from_ast(&mut quiet, input);
    if let Some(entity) = &entity {
        check::entity(&mut quiet, entity);
    }
    let Ok(entity) = quiet.check_value(entity, &input.ident) else {
        return Ok(proc_macro2::TokenStream::new());
    };
    let mut cx = Ctxt::default();
    let edge = ast::Edge::from_ast(&mut cx, input, &entity);
    if let Some(edge) = &edge {
        check::edge(&mut cx, &entity, edge);
    }
    Ok(expand::edge(&entity, &cx.check_value(edge, &input.ident)?))
}

fn table(input: &DeriveInput) -> Expanded {
    let mut cx = Ctxt::default();
    let table = ast::Table::from_ast(&mut cx, input);
    check::table(&mut cx, &table);
    cx.check()?;
    Ok(expand::table(&table))
}

fn collection(input: &DeriveInput) -> Expanded {
    let mut cx = Ctxt::default();
    let collection = ast::Collection::from_ast(&mut cx, input);
    check::collection(&mut cx, &collection);
    cx.check()?;
    Ok(expand::collection(&collection))
}

fn projection(input: &DeriveInput) -> Expanded {
    let mut cx = Ctxt::default();
    let projection = ast::Projection::from_ast(&mut cx, input);
    cx.check()?;
    Ok(expand::projection(&projection))
}

fn key_part(input: &DeriveInput) -> Expanded {
    let mut cx = Ctxt::default();
    let key_part = ast::KeyPart::from_ast(&mut cx, input);
    check::key_part(&mut cx, &key_part);
    cx.check()?;
    Ok(expand::key_part(&key_part))
}
