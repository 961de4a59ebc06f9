//! `#[hierarchy]`: the `Hierarchy` impl of a tree node type and its `tree(..)` constructor.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;

use super::checks::table_display;
use super::query::partition_args;
use crate::ast::{Entity, Strategy};
use crate::template::Segment;

/// The literal text of the sort key before its first placeholder.
fn sk_prefix(entity: &Entity) -> String {
    entity
        .sk
        .as_ref()
        .and_then(|sk| match sk.segments.first() {
            Some(Segment::Lit(l)) => Some(l.clone()),
            _ => None,
        })
        .unwrap_or_default()
}

/// The const check that the tree's index exists in the table and has a sort key.
fn index_check(entity: &Entity, index: &syn::Ident, what: &str) -> TokenStream {
    let ident = entity.ident;
    let index_name = index.to_string();
    let table_name = table_display(entity);
    let missing =
        format!("{table_name} has no index `{index_name}` for the {what} of `{ident}` nodes")
            .replace('{', "{{")
            .replace('}', "}}");
    let no_sk = format!(
        "index `{index_name}` of {table_name} has no sort key; the tree of `{ident}` needs one to select children and depths"
    )
    .replace('{', "{{")
    .replace('}', "}}");
    quote_spanned! {index.span()=>
        const _: () = match __ddb::table_index::<#ident>(#index_name) {
            __ddb::None => ::core::panic!(#missing),
            __ddb::Some(index) => if index.sk.is_none() { ::core::panic!(#no_sk) },
        };
    }
}

pub fn expand(entity: &Entity, table: &TokenStream) -> TokenStream {
    let Some(h) = &entity.hierarchy else {
        return TokenStream::new();
    };
    if h.strategy != Strategy::Path {
        return expand_id_tree(entity, table);
    }
    let (Some((path_index, _)), Some(index)) = (&h.path, &h.index) else {
        return TokenStream::new();
    };
    let ident = entity.ident;
    let vis = entity.vis;
    let path_field = &entity.fields[*path_index];
    let (path_ident, path_ty) = (path_field.ident, path_field.ty);
    let index_name = index.to_string();
    let max_depth = h.max_depth;
    let sk_prefix = sk_prefix(entity);
    let check = index_check(entity, index, "children");
    let fns = quote_spanned! {path_ty.span()=> __ddb::path_fns::<#path_ty>() };

    let (pk_params, pk_expr) = partition_args(entity, &entity.pk, false);
    let tree_doc = format!(
        "The tree of `{ident}` nodes in partition `{}`: reads and writes of nodes by path (see `ddb_model::Tree`).",
        entity.pk.text
    );

    quote! {
        #check

        impl __ddb::Hierarchy for #ident {
            const TREE: __ddb::TreeDef = __ddb::TreeDef {
                index: #index_name,
                sk_prefix: #sk_prefix,
                max_depth: #max_depth,
            };

            fn path(&self) -> &__ddb::TreePath {
                (#fns.get)(&self.#path_ident)
            }

            fn set_path(&mut self, path: __ddb::TreePath) {
                self.#path_ident = (#fns.set)(path);
            }
        }

        impl #ident {
            #[doc = #tree_doc]
            #vis fn tree<'__db>(
                db: &'__db __ddb::Db<#table>,
                #(#pk_params),*
            ) -> __ddb::Tree<'__db, #ident> {
                __ddb::Tree::new(db, #pk_expr)
            }
        }
    }
}

/// The closure and adjacency strategies: nodes addressed by the id in their sort key.
fn expand_id_tree(entity: &Entity, table: &TokenStream) -> TokenStream {
    let Some(h) = &entity.hierarchy else {
        return TokenStream::new();
    };
    let Some((parent_index, _)) = &h.parent else {
        return TokenStream::new();
    };
    let Some(id_name) = entity.sk.as_ref().and_then(|sk| sk.fields().next().map(|(n, _)| n)) else {
        return TokenStream::new();
    };
    let Some(id_field) = entity.field(id_name) else {
        return TokenStream::new();
    };
    let ident = entity.ident;
    let vis = entity.vis;
    let (id_ident, id_ty) = (id_field.ident, id_field.ty);
    let parent_field = &entity.fields[*parent_index];
    let (parent_ident, parent_ty) = (parent_field.ident, parent_field.ty);
    let sk_prefix = sk_prefix(entity);
    let max_depth = h.max_depth;
    let copy_type = format!("{}:copy", entity.name);
    let (strategy, handle, check, index) = match (h.strategy, &h.index) {
        (Strategy::Adjacency, Some(index)) => {
            let name = index.to_string();
            (
                quote! { __ddb::TreeStrategy::Adjacency },
                quote! { __ddb::AdjacencyTree },
                index_check(entity, index, "children"),
                quote! { __ddb::Some(#name) },
            )
        }
        (Strategy::Adjacency, None) => return TokenStream::new(),
        _ => (
            quote! { __ddb::TreeStrategy::Closure },
            quote! { __ddb::ClosureTree },
            TokenStream::new(),
            quote! { __ddb::None },
        ),
    };
    let fns = quote_spanned! {parent_ty.span()=> __ddb::parent_fns::<#parent_ty, #id_ty>() };
    let id_fns = quote_spanned! {id_ty.span()=> __ddb::key_part::<#id_ty>() };
    let (pk_params, pk_expr) = partition_args(entity, &entity.pk, false);
    let tree_doc = format!(
        "The {} tree of `{ident}` nodes in partition `{}`: reads and writes of nodes by id (see `ddb_model::{}`).",
        h.strategy.name(),
        entity.pk.text,
        if h.strategy == Strategy::Closure { "ClosureTree" } else { "AdjacencyTree" },
    );

    quote! {
        #check

        impl __ddb::IdHierarchy for #ident {
            type Id = #id_ty;

            const TREE: __ddb::IdTreeDef = __ddb::IdTreeDef {
                strategy: #strategy,
                index: #index,
                sk_prefix: #sk_prefix,
                max_depth: #max_depth,
                copy_type: #copy_type,
            };

            fn id(&self) -> &Self::Id {
                &self.#id_ident
            }

            fn id_text(id: &Self::Id) -> __ddb::Cow<'_, str> {
                (#id_fns.key_text)(id)
            }

            fn id_from_text(text: &str) -> __ddb::Result<Self::Id, __ddb::KeyPartError> {
                (#id_fns.from_key_text)(text)
            }

            fn parent_id(&self) -> __ddb::Option<&Self::Id> {
                (#fns.get)(&self.#parent_ident)
            }

            fn set_parent_id(&mut self, parent: __ddb::Option<Self::Id>) {
                self.#parent_ident = (#fns.set)(parent);
            }
        }

        impl #ident {
            #[doc = #tree_doc]
            #vis fn tree<'__db>(
                db: &'__db __ddb::Db<#table>,
                #(#pk_params),*
            ) -> #handle<'__db, #ident> {
                #handle::new(db, #pk_expr)
            }
        }
    }
}
