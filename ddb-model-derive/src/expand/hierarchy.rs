//! `#[hierarchy]`: the `Hierarchy` (path strategy) or `IdHierarchy` (closure, adjacency,
//! nested set) impl of a tree node type and its `tree(..)` constructor.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;

use super::Items;
use super::checks::lit;
use super::keys::{args, params};
use crate::ast::{Entity, Field, Hierarchy, Strategy};
use crate::template::Segment;

/// The literal text of the sort key before its first placeholder.
fn sk_prefix(entity: &Entity) -> String {
    match entity.sk.as_ref().and_then(|sk| sk.segments.first()) {
        Some(Segment::Lit(l)) => l.clone(),
        _ => String::new(),
    }
}

/// The const check that the tree's index exists in the table and has a sort key.
fn index_check(entity: &Entity, index: &syn::Ident, nested: bool) -> TokenStream {
    let (ident, table) = (entity.ident, entity.table_display());
    let name = index.to_string();
    let (purpose, need) = if nested {
        (
            "the intervals",
            "to order nodes by their interval's start, so that a subtree is one range",
        )
    } else {
        ("the children", "to select children and depths")
    };
    let missing = lit(format!("{table} has no index `{name}` for {purpose} of `{ident}` nodes"));
    let no_sk = lit(format!(
        "index `{name}` of {table} has no sort key; the tree of `{ident}` needs one {need}"
    ));
    quote_spanned! {index.span()=>
        const _: () = match __ddb::table_index::<#ident>(#name) {
            __ddb::None => ::core::panic!(#missing),
            __ddb::Some(index) => if index.sk.is_none() { ::core::panic!(#no_sk) },
        };
    }
}

/// `E::tree(&db, ..partition key fields)`, returning `handle`.
fn tree_fn(entity: &Entity, db: &TokenStream, handle: TokenStream, doc: String) -> TokenStream {
    let (ident, vis) = (entity.ident, entity.vis);
    let pk_fields = entity.fields_of([&entity.pk]);
    let (params, args) = (params(&pk_fields, false), args(&pk_fields, false));
    quote! {
        #[doc = #doc]
        #vis fn tree<'__db>(db: &'__db #db, #(#params),*) -> #handle<'__db, #ident> {
            #handle::new(db, __KEYS.partition(&#args))
        }
    }
}

pub fn expand(entity: &Entity, db: &TokenStream) -> Items {
    let Some(h) = &entity.hierarchy else {
        return Items::default();
    };
    let mut items = match h.strategy {
        Strategy::Path => path_tree(entity, h, db),
        _ => id_tree(entity, h, db),
    };
    let (ident, table) = (entity.ident, entity.table_display());
    let message = lit(format!(
        "{table} has no entity type attribute (`no_type_attr`): a `#[hierarchy]` entity is told apart from its tree's bookkeeping items by it; give the table a `type_attr`"
    ));
    items.other.extend(quote_spanned! {h.span=>
        const _: () = ::core::assert!(__ddb::tagged_by_table::<#ident>(), #message);
    });
    items
}

fn path_tree(entity: &Entity, h: &Hierarchy, db: &TokenStream) -> Items {
    let (Some(path), Some(index)) =
        (h.path_field.and_then(|i| entity.fields.get(i)), h.tree_index())
    else {
        return Items::default();
    };
    let ident = entity.ident;
    let (path_ident, path_ty) = (path.ident, path.ty);
    let (index_name, max_depth, sk_prefix) = (index.to_string(), h.max_depth(), sk_prefix(entity));
    let check = index_check(entity, index, false);
    let fns = quote_spanned! {path_ty.span()=> __ddb::path_fns::<#path_ty>() };
    let doc = format!(
        "The tree of `{ident}` nodes in partition `{}`: reads and writes of nodes by path (see `ddb_model::tree::PathTree`).",
        entity.pk.text
    );
    let inherent = tree_fn(entity, db, quote! { __ddb::PathTree }, doc);
    let other = quote! {
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
    };
    Items { inherent, other }
}

/// The closure and adjacency strategies: nodes addressed by the id in their sort key.
fn id_tree(entity: &Entity, h: &Hierarchy, db: &TokenStream) -> Items {
    let id =
        entity.sk.as_ref().and_then(|sk| sk.fields().next()).and_then(|(n, _)| entity.field(n));
    let (Some(parent), Some(id)) = (h.parent_field.and_then(|i| entity.fields.get(i)), id) else {
        return Items::default();
    };
    let (ident, strategy) = (entity.ident, h.strategy.name());
    let (handle, strategy_tokens, check, index) = match (h.strategy, h.tree_index()) {
        (Strategy::Adjacency, Some(index)) => {
            let name = index.to_string();
            let check = index_check(entity, index, false);
            (quote!(AdjacencyTree), quote!(Adjacency), check, quote! { __ddb::Some(#name) })
        }
        (Strategy::NestedSet, Some(index)) => {
            let name = index.to_string();
            let check = index_check(entity, index, true);
            (quote!(NestedTree), quote!(NestedSet), check, quote! { __ddb::Some(#name) })
        }
        (Strategy::Adjacency | Strategy::NestedSet, None) => return Items::default(),
        // The closure strategy keeps its copies in the table and reads no index; an `index`
        // given (so that switching strategy is one word) must still exist in the table.
        _ => {
            let check = h.index.value.as_ref().map(|i| index_check(entity, i, false));
            (
                quote!(ClosureTree),
                quote!(Closure),
                check.unwrap_or_default(),
                quote! { __ddb::None },
            )
        }
    };
    let doc = format!(
        "The {strategy} tree of `{ident}` nodes in partition `{}`: reads and writes of nodes by id (see `ddb_model::tree::{handle}`).",
        entity.pk.text,
    );
    let inherent = tree_fn(entity, db, quote! { __ddb::#handle }, doc);
    let (sk_prefix, max_depth) = (sk_prefix(entity), h.max_depth());
    let copy_type = format!("{}:copy", entity.name);
    let def = quote! {
        __ddb::IdTreeDef {
            strategy: __ddb::TreeStrategy::#strategy_tokens,
            index: #index,
            sk_prefix: #sk_prefix,
            max_depth: #max_depth,
            copy_type: #copy_type,
        }
    };
    let id_impl = id_hierarchy(entity, id, parent, def);
    Items { inherent, other: quote! { #check #id_impl } }
}

fn id_hierarchy(entity: &Entity, id: &Field, parent: &Field, def: TokenStream) -> TokenStream {
    let ident = entity.ident;
    let (id_ident, id_ty) = (id.ident, id.ty);
    let (parent_ident, parent_ty) = (parent.ident, parent.ty);
    let fns = quote_spanned! {parent_ty.span()=> __ddb::parent_fns::<#parent_ty, #id_ty>() };
    let id_fns = quote_spanned! {id_ty.span()=> __ddb::key_part::<#id_ty>() };
    quote! {
        impl __ddb::IdHierarchy for #ident {
            type Id = #id_ty;

            const TREE: __ddb::IdTreeDef = #def;

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
    }
}
