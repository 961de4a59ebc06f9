//! `#[derive(Edge)]`: which fields are the endpoints, where the other direction is stored,
//! which counters move. Built on the entity's IR, whose own mistakes `#[derive(Entity)]`
//! reports.

use proc_macro2::Span;
use syn::{DeriveInput, Ident, LitStr};

use super::{Entity, field_index, parse};
use crate::attr::{self, InverseAttr, Slot};
use crate::ctxt::Ctxt;
use crate::template::Template;

/// Where the incoming edges of a node are stored, as written.
pub enum Inverse {
    /// `inverse(pk = .., sk = .., ..)`: materialised inverse items.
    Items(ItemsInverse),
    /// `inverse(index = ..)`: the entity's index at `position` in `entity.indexes` (`None`:
    /// the entity has no such index).
    Index { index: Ident, position: Option<usize> },
    /// `inverse = none`: no other direction (the `none` token).
    None(Ident),
}

pub struct ItemsInverse {
    /// The templates (`None`: missing, reported already) and whether they parsed cleanly.
    pub pk: Option<(Template, bool)>,
    pub sk: Option<(Template, bool)>,
    pub pk_lit: Option<LitStr>,
    pub sk_lit: Option<LitStr>,
    /// `name = ".."`: the entity type of inverse items.
    pub name: Option<LitStr>,
    /// `fields(..)`: the fields copied onto inverse items (`None`: every field).
    pub fields: Option<Vec<Ident>>,
}

pub struct Edge {
    /// The `edge` token, for errors about missing keys.
    pub span: Span,
    pub from: Slot<Ident>,
    pub from_field: Option<usize>,
    pub to: Slot<Ident>,
    pub to_field: Option<usize>,
    /// `None`: not given, or not valid (reported).
    pub inverse: Option<Inverse>,
    pub inverse_given: bool,
    /// The `symmetric` token.
    pub symmetric: Option<syn::Path>,
    pub from_count: Option<syn::Path>,
    pub to_count: Option<syn::Path>,
    pub count: Option<syn::Path>,
    /// The shards of each counter (`None`: not sharded).
    pub from_shards: Option<u16>,
    pub to_shards: Option<u16>,
    pub count_shards: Option<u16>,
}

impl Edge {
    /// Reads `#[edge]`; `None` (reported) when there is none.
    pub fn from_ast(cx: &mut Ctxt, input: &DeriveInput, entity: &Entity) -> Option<Edge> {
        let Some(attrs) = attr::edge_attrs(cx, &input.attrs) else {
            cx.error_spanned_by(
                entity.ident,
                format!(
                    "`#[derive(Edge)]` needs an #[edge(..)] attribute naming the endpoints and the other direction (or `inverse = none`), as in #[edge(from = follower, to = followee, {})]",
                    "inverse(pk = \"USER#<followee>\", sk = \"FOLLOWER#<follower>\")"
                ),
            );
            return None;
        };
        let mut endpoint = |slot: &Slot<Ident>, key: &str| {
            let ident = slot.value.as_ref()?;
            field_index(cx, entity.ident, &entity.fields, ident, &format!("`{key}`"))
        };
        let from_field = endpoint(&attrs.from, "from");
        let to_field = endpoint(&attrs.to, "to");
        let inverse = attrs.inverse.value.map(|inverse| match inverse {
            InverseAttr::None(token) => Inverse::None(token),
            InverseAttr::Index { index } => {
                let position = entity.indexes.iter().position(|i| i.name == index);
                Inverse::Index { index, position }
            }
            InverseAttr::Items { pk, sk, name, fields } => {
                let mut parse_lit = |lit: &Option<LitStr>| {
                    let before = cx.len();
                    let template = parse(cx, lit.as_ref()?);
                    // The inverse's placeholders are not type-checked like the entity's.
                    for (name, span, first) in template.typed_follows() {
                        cx.syn_error(crate::template::separator_error(name, span, first));
                    }
                    Some((template, cx.len() == before))
                };
                let (pk_t, sk_t) = (parse_lit(&pk), parse_lit(&sk));
                Inverse::Items(ItemsInverse {
                    pk: pk_t,
                    sk: sk_t,
                    pk_lit: pk,
                    sk_lit: sk,
                    name,
                    fields,
                })
            }
        });
        Some(Edge {
            span: attrs.span,
            from: attrs.from,
            from_field,
            to: attrs.to,
            to_field,
            inverse,
            inverse_given: attrs.inverse.given,
            symmetric: attrs.symmetric.value,
            from_count: attrs.from_count.value,
            to_count: attrs.to_count.value,
            count: attrs.count.value,
            from_shards: attrs.from_shards,
            to_shards: attrs.to_shards,
            count_shards: attrs.count_shards,
        })
    }

    /// `symmetric` (and no `inverse(..)`, which would contradict it).
    pub fn is_symmetric(&self) -> bool {
        self.symmetric.is_some() && self.inverse.is_none()
    }

    /// The counters of the `from` and `to` nodes (`count` for both of a symmetric edge).
    pub fn counters(&self) -> (Option<&syn::Path>, Option<&syn::Path>) {
        if self.is_symmetric() {
            (self.count.as_ref(), self.count.as_ref())
        } else {
            (self.from_count.as_ref(), self.to_count.as_ref())
        }
    }

    /// The shards of the counters of the `from` and `to` nodes, as [`Edge::counters`].
    pub fn shards(&self) -> (Option<u16>, Option<u16>) {
        if self.is_symmetric() {
            (self.count_shards, self.count_shards)
        } else {
            (self.from_shards, self.to_shards)
        }
    }
}
