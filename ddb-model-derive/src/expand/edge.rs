//! `#[derive(Edge)]`: the `Edge` impl (templates as data, endpoint accessors, counters) and
//! `E::edges(&db)`. The logic lives in `ddb_model::edge`; this writes down the layout.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;

use super::keys::template_args;
use super::{db_of, wrap};
use crate::ast::{Edge, Entity, Field, Inverse, ItemsInverse};
use crate::template::Template;

/// The key templates of one side of the edge, their placeholders numbered as the runtime
/// reads them: part 0 is the `from` endpoint, part 1 the `to` endpoint.
fn templates(ends: &[&Field; 2], pk: &Template, sk: &Template) -> TokenStream {
    let (pk_text, pk) = template_args(pk, ends);
    let (sk_text, sk) = template_args(sk, ends);
    quote! { __ddb::Templates::new(#pk_text, #pk, #sk_text, #sk) }
}

/// The parameter of `counters` for the endpoint `var` (`_` when it has no counter) and
/// `Some(counter of node)`, spanned at the counter's path so that a node whose key is not the
/// endpoint alone, or a field that is not a number, is reported there. Without counters, the
/// trait's default `counters` (none) is left in place.
fn counter(
    ident: &syn::Ident,
    path: Option<&syn::Path>,
    shards: Option<u16>,
    var: TokenStream,
) -> (TokenStream, TokenStream) {
    let Some(path) = path else {
        return (quote!(_), quote! { __ddb::None });
    };
    let keep = path.segments.len().saturating_sub(1);
    let node = syn::Path {
        leading_colon: path.leading_colon,
        segments: path.segments.iter().take(keep).cloned().collect(),
    };
    let counter = match shards {
        Some(n) => quote_spanned! {path.span()=>
            #var.map(|__node| {
                __ddb::edge_counter_sharded::<#ident, #node, _>(#node::key(__node), #path, #n)
            })
        },
        None => quote_spanned! {path.span()=>
            #var.map(|__node| __ddb::edge_counter::<#ident, #node, _>(#node::key(__node), #path))
        },
    };
    (var, counter)
}

/// The `InverseSpec` of the edge and where incoming edges are read (`OnTable` / `OnIndex`).
fn inverse(entity: &Entity, edge: &Edge, ends: &[&Field; 2]) -> Option<(TokenStream, TokenStream)> {
    if edge.is_symmetric() {
        return Some((quote! { __ddb::InverseSpec::Symmetric }, quote! { __ddb::OnTable }));
    }
    match edge.inverse.as_ref()? {
        Inverse::Items(ItemsInverse {
            pk: Some((pk, _)), sk: Some((sk, _)), name, fields, ..
        }) => {
            let key = templates(ends, pk, sk);
            let name =
                name.as_ref().map_or_else(|| format!("{}~inverse", entity.name), |l| l.value());
            let fields = match fields {
                Some(list) => {
                    let attrs = list
                        .iter()
                        .filter_map(|f| entity.fields.iter().find(|field| field.ident == f))
                        .map(|f| &f.attr_name);
                    quote! { __ddb::Some(&[#(#attrs),*]) }
                }
                None => quote! { __ddb::None },
            };
            let spec =
                quote! { __ddb::InverseSpec::Items { key: #key, name: #name, fields: #fields } };
            Some((spec, quote! { __ddb::OnTable }))
        }
        Inverse::Items(_) => None,
        // Never read: `OneWay` has no `Backward` impl; it counts with a `to_count`.
        Inverse::None(_) => {
            let counted = edge.counters().1.is_some();
            Some((quote! { __ddb::InverseSpec::None }, quote! { __ddb::OneWay<#counted> }))
        }
        Inverse::Index { position, .. } => {
            let index = entity.indexes.get((*position)?)?;
            let name = index.name.to_string();
            let key = templates(ends, &index.pk, index.sk.as_ref()?);
            let spec = quote! { __ddb::InverseSpec::Index { name: #name, key: #key } };
            Some((spec, quote! { __ddb::OnIndex }))
        }
    }
}

pub fn expand(entity: &Entity, edge: &Edge) -> TokenStream {
    let (ident, vis, db) = (entity.ident, entity.vis, db_of(entity));
    let (Some(from), Some(to)) = (
        edge.from_field.and_then(|i| entity.fields.get(i)),
        edge.to_field.and_then(|i| entity.fields.get(i)),
    ) else {
        return TokenStream::new();
    };
    let ends = [from, to];
    let (from_ident, to_ident) = (from.ident, to.ident);
    let (from_ty, to_ty) = (from.ty, to.ty);
    let (from_attr, to_attr) = (&from.attr_name, &to.attr_name);
    let (Some(sk), Some((inverse, incoming_on))) = (&entity.sk, inverse(entity, edge, &ends))
    else {
        return TokenStream::new();
    };
    let forward = templates(&ends, &entity.pk, sk);
    let sharded = {
        let (counts, shards) = (edge.counters(), edge.shards());
        (counts.0.is_some() && shards.0.is_some()) || (counts.1.is_some() && shards.1.is_some())
    };
    let counters = match edge.counters() {
        (None, None) => TokenStream::new(),
        (from_count, to_count) => {
            let (from_shards, to_shards) = edge.shards();
            let (from_var, from_counter) = counter(ident, from_count, from_shards, quote! { from });
            let (to_var, to_counter) = counter(ident, to_count, to_shards, quote! { to });
            quote! {
                fn counters(
                    #from_var: __ddb::Option<&Self::From>,
                    #to_var: __ddb::Option<&Self::To>,
                ) -> __ddb::Counters {
                    __ddb::Counters::new(#from_counter, #to_counter)
                }
            }
        }
    };

    // Both endpoints of a symmetric edge have one type (its items are mirrored).
    let same_type = edge.is_symmetric().then(|| {
        quote_spanned! {to_ty.span()=>
            const _: () = __ddb::symmetric_endpoints::<#from_ty, #to_ty>();
        }
    });
    let untagged = super::checks::lit(format!(
        "{} has no entity type attribute (`no_type_attr`): an edge is told apart from its inverse and counter items by it; give the table a `type_attr`",
        entity.table_display()
    ));
    let tagged = quote_spanned! {edge.span=>
        const _: () = ::core::assert!(__ddb::tagged_by_table::<#ident>(), #untagged);
    };
    let edges_doc = format!(
        "The `{ident}` edges of `db`: link, unlink, outgoing and incoming edges, traversals (see `ddb_model::Edges`)."
    );
    wrap(quote! {
        impl __ddb::Edge for #ident {
            type From = #from_ty;
            type To = #to_ty;
            type IncomingOn = #incoming_on;
            const SPEC: __ddb::EdgeSpec = __ddb::EdgeSpec {
                forward: #forward,
                inverse: #inverse,
                attrs: (#from_attr, #to_attr),
                sharded: #sharded,
            };

            fn source(&self) -> &Self::From {
                &self.#from_ident
            }

            fn target(&self) -> &Self::To {
                &self.#to_ident
            }

            #counters
        }

        #same_type
        #tagged

        impl #ident {
            #[doc = #edges_doc]
            #vis fn edges<'__db>(db: &'__db #db) -> __ddb::Edges<'__db, #ident> {
                db.edges::<#ident>()
            }
        }
    })
}
