//! `#[derive(Edge)]`: the `Edge` impl (templates as data, endpoint accessors, counters) and
//! `E::edges(&db)`. The logic lives in `ddb_model::edge`; this writes down the layout.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::DeriveInput;
use syn::spanned::Spanned;

use super::wrap;
use crate::ast::Entity;
use crate::check;
use crate::ctxt::Ctxt;
use crate::edge::{Edge, Inverse};
use crate::template::{Segment, Template};

pub fn derive(input: &DeriveInput) -> Result<TokenStream, syn::Error> {
    // `#[derive(Entity)]` reports the entity's own mistakes; an edge is only checked and
    // generated on a valid entity, so that one mistake is not reported twice.
    let mut quiet = Ctxt::default();
    let entity = Entity::from_ast(&mut quiet, input);
    if let Some(entity) = &entity {
        check::check(&mut quiet, entity);
    }
    let (Some(entity), Ok(())) = (entity, quiet.check()) else {
        return Ok(TokenStream::new());
    };
    let mut cx = Ctxt::default();
    let edge = Edge::from_ast(&mut cx, input, &entity);
    cx.check()?;
    let Some(edge) = edge else {
        return Err(syn::Error::new_spanned(&input.ident, "invalid edge"));
    };
    Ok(expand(&entity, &edge))
}

fn segments(from: &str, template: &Template) -> TokenStream {
    let segs = template.segments.iter().map(|s| match s {
        Segment::Lit(l) => quote! { __ddb::Seg::Lit(#l) },
        Segment::Field { name, .. } if *name == from => quote! { __ddb::Seg::From },
        Segment::Field { .. } => quote! { __ddb::Seg::To },
    });
    quote! { &[#(#segs),*] }
}

/// The segments of a pk and sk template; `from` is the `from` field's name.
fn templates(from: &str, pk: &Template, sk: &Template) -> TokenStream {
    let pk = segments(from, pk);
    let sk = segments(from, sk);
    quote! { __ddb::Templates { pk: #pk, sk: #sk } }
}

/// `Some(counter of node)` for the endpoint `var`, spanned at the counter's path so that a
/// node whose key is not the endpoint alone, or a field that is not a number, is reported
/// there.
fn counter(ident: &syn::Ident, path: Option<&syn::Path>, var: TokenStream) -> TokenStream {
    let Some(path) = path else {
        return quote! { { let _ = #var; __ddb::None } };
    };
    let keep = path.segments.len().saturating_sub(1);
    let node = syn::Path {
        leading_colon: path.leading_colon,
        segments: path.segments.iter().take(keep).cloned().collect(),
    };
    quote_spanned! {path.span()=>
        #var.map(|__node| __ddb::edge_counter::<#ident, #node, _>(#node::key(__node), #path))
    }
}

fn expand(entity: &Entity, edge: &Edge) -> TokenStream {
    let ident = entity.ident;
    let vis = entity.vis;
    let table = match &entity.table {
        Some(path) => quote! { #path },
        None => quote! { ::ddb_model::DefaultTable },
    };
    let Some((from, to)) = edge.endpoints(entity) else {
        return quote! {};
    };
    let from_name = from.name();
    let (from_ident, to_ident) = (from.ident, to.ident);
    let (from_ty, to_ty) = (from.ty, to.ty);
    let (from_attr, to_attr) = (&from.attr_name, &to.attr_name);

    // Validation guarantees the sort key; a missing one was reported.
    let forward = match &entity.sk {
        Some(sk) => templates(&from_name, &entity.pk, sk),
        None => return quote! {},
    };
    let (inverse, incoming_on) = match &edge.inverse {
        Inverse::Items { pk, sk, name, fields } => {
            let key = templates(&from_name, pk, sk);
            let fields = match fields {
                Some(list) => quote! { __ddb::Some(&[#(#list),*]) },
                None => quote! { __ddb::None },
            };
            (
                quote! { __ddb::InverseSpec::Items { key: #key, name: #name, fields: #fields } },
                quote! { __ddb::OnTable },
            )
        }
        Inverse::Index { index } => {
            let Some(index) = entity.indexes.get(*index) else {
                return quote! {};
            };
            let name = index.name.to_string();
            let key = match &index.sk {
                Some(sk) => templates(&from_name, &index.pk, sk),
                None => return quote! {},
            };
            (
                quote! { __ddb::InverseSpec::Index { name: #name, key: #key } },
                quote! { __ddb::OnIndex },
            )
        }
        Inverse::Symmetric => (quote! { __ddb::InverseSpec::Symmetric }, quote! { __ddb::OnTable }),
    };
    let from_counter = counter(ident, edge.from_count.as_ref(), quote! { from });
    let to_counter = counter(ident, edge.to_count.as_ref(), quote! { to });

    // Both endpoints of a symmetric edge have one type (its items are mirrored).
    let same_type = match edge.inverse {
        Inverse::Symmetric => quote_spanned! {to_ty.span()=>
            const _: () = __ddb::symmetric_endpoints::<#from_ty, #to_ty>();
        },
        _ => quote! {},
    };

    let edges_doc = format!(
        "The `{ident}` edges of `db`: link, unlink, outgoing and incoming edges, traversals (see `ddb_model::Edges`)."
    );
    let items = wrap(quote! {
        impl __ddb::Edge for #ident {
            type From = #from_ty;
            type To = #to_ty;
            type IncomingOn = #incoming_on;
            const SPEC: __ddb::EdgeSpec = __ddb::EdgeSpec {
                forward: #forward,
                inverse: #inverse,
                from_attr: #from_attr,
                to_attr: #to_attr,
            };

            fn source(&self) -> &Self::From {
                &self.#from_ident
            }

            fn target(&self) -> &Self::To {
                &self.#to_ident
            }

            fn counters(
                from: __ddb::Option<&Self::From>,
                to: __ddb::Option<&Self::To>,
            ) -> __ddb::Counters {
                __ddb::Counters::new(#from_counter, #to_counter)
            }
        }

        #same_type

        impl #ident {
            #[doc = #edges_doc]
            #vis fn edges<'__db>(db: &'__db __ddb::Db<#table>) -> __ddb::Edges<'__db, #ident> {
                db.edges::<#ident>()
            }
        }
    });
    quote! { #items }
}
