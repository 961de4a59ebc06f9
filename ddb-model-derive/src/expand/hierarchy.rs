//! `#[hierarchy]`: the `Hierarchy` impl of a tree node type and its `tree(..)` constructor.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;

use super::checks::table_display;
use super::query::partition_args;
use crate::ast::Entity;
use crate::template::Segment;

pub fn expand(entity: &Entity, table: &TokenStream) -> TokenStream {
    let Some(h) = &entity.hierarchy else {
        return TokenStream::new();
    };
    let (Some((path_index, _)), Some(index)) = (&h.path, &h.index) else {
        return TokenStream::new();
    };
    let ident = entity.ident;
    let vis = entity.vis;
    let path_field = &entity.fields[*path_index];
    let (path_ident, path_ty) = (path_field.ident, path_field.ty);
    let index_name = index.to_string();
    let max_depth = h.max_depth;
    let sk_prefix: String = entity
        .sk
        .as_ref()
        .and_then(|sk| match sk.segments.first() {
            Some(Segment::Lit(l)) => Some(l.clone()),
            _ => None,
        })
        .unwrap_or_default();

    let table_name = table_display(entity);
    let missing =
        format!("{table_name} has no index `{index_name}` for the children of `{ident}` nodes")
            .replace('{', "{{")
            .replace('}', "}}");
    let no_sk = format!(
        "index `{index_name}` of {table_name} has no sort key; the tree of `{ident}` needs one to select children and depths"
    )
    .replace('{', "{{")
    .replace('}', "}}");
    let check = quote_spanned! {index.span()=>
        const _: () = match __ddb::table_index::<#ident>(#index_name) {
            __ddb::None => ::core::panic!(#missing),
            __ddb::Some(index) => if index.sk.is_none() { ::core::panic!(#no_sk) },
        };
    };
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
