//! Derive macros of [ddb-model](https://docs.rs/ddb-model). Use them through that crate:
//! `ddb_model::Entity`, `ddb_model::Table`, `ddb_model::KeyPart`, `ddb_model::Collection`,
//! `ddb_model::Edge`.
//!
//! Each derive parses its input into an IR with spans (`attr`, `ast`, `template`), checks it
//! (`check`), and only then generates code (`expand`). Errors are collected (`ctxt`) so one
//! compile shows every mistake.

mod ast;
mod attr;
mod check;
mod ctxt;
mod edge;
mod expand;
mod template;

#[cfg(test)]
mod generated_size;

use proc_macro::TokenStream;
use syn::{DeriveInput, parse_macro_input};

/// Derives `ddb_model::Entity`. See the ddb-model crate documentation.
#[proc_macro_derive(Entity, attributes(entity, index, hierarchy))]
pub fn derive_entity(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    expand::entity(&input).unwrap_or_else(syn::Error::into_compile_error).into()
}

/// Derives `ddb_model::Table`. See the ddb-model crate documentation.
#[proc_macro_derive(Table, attributes(table))]
pub fn derive_table(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    expand::table(&input).unwrap_or_else(syn::Error::into_compile_error).into()
}

/// Derives `ddb_model::Collection`. See the ddb-model crate documentation.
#[proc_macro_derive(Collection, attributes(collection))]
pub fn derive_collection(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    expand::collection(&input).unwrap_or_else(syn::Error::into_compile_error).into()
}

/// Derives `ddb_model::KeyPart`. See the ddb-model crate documentation.
#[proc_macro_derive(KeyPart, attributes(key_part))]
pub fn derive_key_part(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    expand::key_part(&input).unwrap_or_else(syn::Error::into_compile_error).into()
}

/// Derives `ddb_model::Edge` on an entity (next to `#[derive(Entity)]`). See the ddb-model
/// crate documentation, module `edge`.
#[proc_macro_derive(Edge, attributes(edge))]
pub fn derive_edge(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    expand::edge(&input).unwrap_or_else(syn::Error::into_compile_error).into()
}
