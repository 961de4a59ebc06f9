//! `#[edge(from = .., to = .., inverse(..) | inverse = none | symmetric, from_count = .., to_count = .., count = ..)]`;
//! a counter may be sharded: `to_count(User::FOLLOWERS, shards = 16)`.

use proc_macro2::Span;
use syn::meta::ParseNestedMeta;
use syn::{Attribute, Ident, LitStr, Token};

use super::{
    Slot, flag, ident_value, key_text, lit_value, path_value, skip_value, unknown_key, value_expr,
};
use crate::ctxt::Ctxt;

/// Where the incoming edges of a node are, as written in `#[edge]`.
pub enum InverseAttr {
    /// `inverse(pk = "..", sk = "..", name = "..", fields(..))`: materialised inverse items.
    Items {
        pk: Option<LitStr>,
        sk: Option<LitStr>,
        name: Option<LitStr>,
        fields: Option<Vec<Ident>>,
    },
    /// `inverse(index = gsi1)`: an index of the entity that inverts the keys.
    Index { index: Ident },
    /// `inverse = none`: a one-directional edge (the `none` token).
    None(Ident),
}

pub struct EdgeAttrs {
    /// The first `#[edge]` attribute, for errors about missing keys.
    pub span: Span,
    pub from: Slot<Ident>,
    pub to: Slot<Ident>,
    pub inverse: Slot<InverseAttr>,
    pub symmetric: Slot<syn::Path>,
    pub from_count: Slot<syn::Path>,
    pub to_count: Slot<syn::Path>,
    pub count: Slot<syn::Path>,
    /// The shards of `from_count(.., shards = n)`, `to_count(..)`, `count(..)`.
    pub from_shards: Option<u16>,
    pub to_shards: Option<u16>,
    pub count_shards: Option<u16>,
    /// A `shards` key written outside a counter's parentheses (reported).
    misplaced_shards: Option<syn::Path>,
}

/// The most shards of a counter: `ddb_model::edge::MAX_SHARDS` (a count reads the node item
/// and every shard in one `BatchGetItem` of at most 100 keys).
const MAX_SHARDS: u64 = 99;

const EDGE_KEYS: &str = "from, to, inverse, symmetric, from_count, to_count, count";

const INVERSE_KEYS: &str = "pk, sk, name, fields, index";

const INVERSE_EXAMPLE: &str = "inverse(pk = \"USER#<followee>\", sk = \"FOLLOWER#<follower>\")";

/// The `#[edge]` attribute; `None` when there is none.
pub fn edge_attrs(cx: &mut Ctxt, attrs: &[Attribute]) -> Option<EdgeAttrs> {
    let mut out: Option<EdgeAttrs> = None;
    for attr in attrs.iter().filter(|a| a.path().is_ident("edge")) {
        if out.is_some() {
            cx.error_spanned_by(
                attr,
                "duplicate #[edge]: an entity is one kind of edge; put every key in one #[edge(..)]",
            );
            continue;
        }
        let mut edge = EdgeAttrs {
            span: attr.path().get_ident().map_or_else(Span::call_site, Ident::span),
            from: Slot::new("edge", "from"),
            to: Slot::new("edge", "to"),
            inverse: Slot::new("edge", "inverse"),
            symmetric: Slot::new("edge", "symmetric"),
            from_count: Slot::new("edge", "from_count"),
            to_count: Slot::new("edge", "to_count"),
            count: Slot::new("edge", "count"),
            from_shards: None,
            to_shards: None,
            count_shards: None,
            misplaced_shards: None,
        };
        if let Err(err) = attr.parse_nested_meta(|meta| edge_key(cx, &meta, &mut edge)) {
            cx.syn_error(err);
        }
        if let Some(at) = edge.misplaced_shards.take() {
            let counted = edge.from_count.given || edge.to_count.given || edge.count.given;
            let message = if counted {
                "`shards` spreads one counter: write it in that counter's parentheses, as in to_count(User::FOLLOWERS, shards = 16)"
            } else {
                "`shards` spreads a degree counter, and this edge has none: declare the counter with its shards, as in to_count(User::FOLLOWERS, shards = 16), or remove `shards`"
            };
            cx.error_spanned_by(&at, message);
        }
        out = Some(edge);
    }
    out
}

/// One key of `#[edge(..)]`.
fn edge_key(cx: &mut Ctxt, meta: &ParseNestedMeta, edge: &mut EdgeAttrs) -> syn::Result<()> {
    let key = meta.path.clone();
    if key.is_ident("from") {
        let field = ident_value(cx, meta, "a field name", "from = follower")?;
        edge.from.set(cx, &key, field);
    } else if key.is_ident("to") {
        let field = ident_value(cx, meta, "a field name", "to = followee")?;
        edge.to.set(cx, &key, field);
    } else if key.is_ident("inverse") {
        let inverse = inverse_attr(cx, meta)?;
        edge.inverse.set(cx, &key, inverse);
    } else if key.is_ident("symmetric") {
        flag(cx, meta, "edge")?;
        edge.symmetric.set(cx, &key, Some(key.clone()));
    } else if let Some((slot, shards)) = counter_slot(edge, &key) {
        let which = key_text(meta);
        if meta.input.peek(syn::token::Paren) {
            let (path, n) = sharded_counter(cx, meta, &which)?;
            if !slot.given {
                *shards = n;
            }
            slot.set(cx, &key, path);
        } else {
            let example = format!("{which} = User::FOLLOWERS");
            let path = path_value(cx, meta, "the counter field's path", &example)?;
            slot.set(cx, &key, path);
        }
    } else if key.is_ident("shards") {
        skip_value(meta)?;
        edge.misplaced_shards.get_or_insert(key);
    } else {
        unknown_key(cx, meta, "edge", EDGE_KEYS)?;
    }
    Ok(())
}

/// The slot of a counter key (`from_count`, `to_count`, `count`) and of its shards.
fn counter_slot<'e>(
    edge: &'e mut EdgeAttrs,
    key: &syn::Path,
) -> Option<(&'e mut Slot<syn::Path>, &'e mut Option<u16>)> {
    if key.is_ident("from_count") {
        Some((&mut edge.from_count, &mut edge.from_shards))
    } else if key.is_ident("to_count") {
        Some((&mut edge.to_count, &mut edge.to_shards))
    } else if key.is_ident("count") {
        Some((&mut edge.count, &mut edge.count_shards))
    } else {
        None
    }
}

/// `to_count(User::FOLLOWERS, shards = 16)`: a sharded counter, its path and its shards
/// (`None` when missing or invalid, reported).
fn sharded_counter(
    cx: &mut Ctxt,
    meta: &ParseNestedMeta,
    which: &str,
) -> syn::Result<(Option<syn::Path>, Option<u16>)> {
    let example = format!("{which}(User::FOLLOWERS, shards = 16)");
    let mut path: Option<syn::Path> = None;
    let within = match which {
        "from_count" => "edge(from_count(..))",
        "to_count" => "edge(to_count(..))",
        _ => "edge(count(..))",
    };
    let mut shards: Slot<u16> = Slot::new(within, "shards");
    // A misspelt key is reported alone, not also as missing `shards`.
    let mut unknown = false;
    meta.parse_nested_meta(|inner| {
        if inner.path.is_ident("shards") {
            let n = shards_value(cx, &inner, which)?;
            shards.set(cx, &inner.path, n);
        } else if inner.input.is_empty() || inner.input.peek(Token![,]) {
            if path.is_some() {
                cx.error_spanned_by(
                    &inner.path,
                    format!("`{which}(..)` names one counter field; keep one, as in {example}"),
                );
            } else {
                path = Some(inner.path.clone());
            }
        } else {
            cx.error_spanned_by(
                &inner.path,
                format!(
                    "unknown key `{}` in `{which}(..)`: it takes the counter field's path and `shards`, as in {example}",
                    key_text(&inner)
                ),
            );
            skip_value(&inner)?;
            unknown = true;
        }
        Ok(())
    })?;
    if path.is_none() {
        cx.error_spanned_by(
            &meta.path,
            format!("`{which}(..)` names the counter it shards first, as in {example}"),
        );
    }
    if !shards.given && !unknown {
        cx.error_spanned_by(
            &meta.path,
            format!(
                "`{which}(..)` declares a sharded counter and needs `shards`, as in {example}; for a counter on the node item alone, write {which} = User::FOLLOWERS"
            ),
        );
    }
    Ok((path, shards.value))
}

/// `shards = n`: an integer from 2 to [`MAX_SHARDS`]; `None` (reported) otherwise.
fn shards_value(cx: &mut Ctxt, meta: &ParseNestedMeta, which: &str) -> syn::Result<Option<u16>> {
    let example = format!("{which}(User::FOLLOWERS, shards = 16)");
    let Some(expr) = value_expr(cx, meta, &example)? else {
        return Ok(None);
    };
    let syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Int(lit), .. }) = &expr else {
        cx.error_spanned_by(
            &expr,
            format!("`shards` takes an integer literal from 2 to {MAX_SHARDS}, as in {example}"),
        );
        return Ok(None);
    };
    match lit.base10_parse::<u64>() {
        Ok(n @ 2..=MAX_SHARDS) => Ok(u16::try_from(n).ok()),
        Ok(n @ (0 | 1)) => {
            cx.error_spanned_by(
                lit,
                format!(
                    "a sharded counter needs at least 2 shards, not {n}: with one, every link writes one item anyway; write {which} = User::FOLLOWERS for a counter on the node item, or shards = 2 or more"
                ),
            );
            Ok(None)
        }
        _ => {
            cx.error_spanned_by(
                lit,
                format!(
                    "at most {MAX_SHARDS} shards: a count reads the node item and every shard in one BatchGetItem, of at most 100 keys"
                ),
            );
            Ok(None)
        }
    }
}

/// The keys of `inverse(..)` as written.
struct InverseSlots {
    pk: Slot<LitStr>,
    sk: Slot<LitStr>,
    name: Slot<LitStr>,
    fields: Slot<Vec<Ident>>,
    index: Slot<Ident>,
    /// The first `index` key, for errors about keys that do not go with it.
    index_key: Option<syn::Path>,
}

/// `inverse(...)` or `inverse = none` inside `#[edge]`.
fn inverse_attr(cx: &mut Ctxt, meta: &ParseNestedMeta) -> syn::Result<Option<InverseAttr>> {
    if meta.input.peek(Token![=]) {
        let value: syn::Expr = meta.value()?.parse()?;
        if let syn::Expr::Path(syn::ExprPath { qself: None, path, .. }) = &value
            && let Some(none) = path.get_ident().filter(|i| *i == "none")
        {
            return Ok(Some(InverseAttr::None(none.clone())));
        }
        cx.error_spanned_by(
            &value,
            format!(
                "`inverse = ..` takes only `none`, for a one-directional edge read from its `from` node alone; to describe the other direction, write it in parentheses, as in {INVERSE_EXAMPLE} or inverse(index = gsi1)"
            ),
        );
        return Ok(None);
    }
    if !meta.input.peek(syn::token::Paren) {
        cx.error_spanned_by(
            &meta.path,
            format!(
                "`inverse` describes the other direction in parentheses, as in {INVERSE_EXAMPLE} or inverse(index = gsi1); write `inverse = none` for a one-directional edge"
            ),
        );
        skip_value(meta)?;
        return Ok(None);
    }
    let mut slots = InverseSlots {
        pk: Slot::new("edge(inverse)", "pk"),
        sk: Slot::new("edge(inverse)", "sk"),
        name: Slot::new("edge(inverse)", "name"),
        fields: Slot::new("edge(inverse)", "fields"),
        index: Slot::new("edge(inverse)", "index"),
        index_key: None,
    };
    meta.parse_nested_meta(|inner| inverse_key(cx, &inner, &mut slots))?;
    Ok(inverse_from_slots(cx, meta, slots))
}

/// One key of `inverse(..)`.
fn inverse_key(
    cx: &mut Ctxt,
    inner: &ParseNestedMeta,
    slots: &mut InverseSlots,
) -> syn::Result<()> {
    let key = inner.path.clone();
    if key.is_ident("pk") {
        let lit = lit_value(cx, inner, "pk = \"USER#<followee>\"")?;
        slots.pk.set(cx, &key, lit);
    } else if key.is_ident("sk") {
        let lit = lit_value(cx, inner, "sk = \"FOLLOWER#<follower>\"")?;
        slots.sk.set(cx, &key, lit);
    } else if key.is_ident("name") {
        let lit = lit_value(cx, inner, "name = \"Follower\"")?;
        if let Some(lit) = lit.as_ref().filter(|l| l.value().is_empty()) {
            cx.error_spanned_by(
                lit,
                "the inverse entity name cannot be empty: it is stored in every inverse item; give a name such as \"Follower\", or remove `name`",
            );
        }
        slots.name.set(cx, &key, lit);
    } else if key.is_ident("index") {
        let value = ident_value(cx, inner, "a field name", "index = gsi1")?;
        slots.index_key.get_or_insert_with(|| key.clone());
        slots.index.set(cx, &key, value);
    } else if key.is_ident("fields") {
        if !inner.input.peek(syn::token::Paren) {
            cx.error_spanned_by(
                &key,
                "`fields` lists the fields copied onto inverse items, as in fields(since, name)",
            );
            return skip_value(inner);
        }
        let list = field_list(cx, inner)?;
        slots.fields.set(cx, &key, Some(list));
    } else {
        unknown_key(cx, inner, "edge(inverse)", INVERSE_KEYS)?;
    }
    Ok(())
}

/// `fields(a, b)` inside `inverse(..)`.
fn field_list(cx: &mut Ctxt, meta: &ParseNestedMeta) -> syn::Result<Vec<Ident>> {
    let mut list = Vec::new();
    meta.parse_nested_meta(|f| {
        match f.path.get_ident() {
            Some(ident) if f.input.is_empty() || f.input.peek(Token![,]) => {
                list.push(ident.clone());
            }
            _ => {
                cx.error_spanned_by(
                    &f.path,
                    "`fields(..)` lists field names, as in fields(since, name)",
                );
                skip_value(&f)?;
            }
        }
        Ok(())
    })?;
    Ok(list)
}

/// The inverse the keys describe: an index, or inverse items (which need `pk` and `sk`).
fn inverse_from_slots(
    cx: &mut Ctxt,
    meta: &ParseNestedMeta,
    slots: InverseSlots,
) -> Option<InverseAttr> {
    let InverseSlots { pk, sk, name, fields, index, index_key } = slots;
    if let Some(at) = index_key {
        for (given, what) in
            [(pk.given, "pk"), (sk.given, "sk"), (name.given, "name"), (fields.given, "fields")]
        {
            if given {
                cx.error_spanned_by(
                    &at,
                    format!(
                        "inverse(index = ..) reads the edges through the index's own keys, so `{what}` has no use here: keep `index` for an index, or {INVERSE_EXAMPLE} for inverse items"
                    ),
                );
            }
        }
        return index.value.map(|index| InverseAttr::Index { index });
    }
    for (slot, what) in [(&pk, "pk"), (&sk, "sk")] {
        if !slot.given {
            cx.error_spanned_by(
                &meta.path,
                format!(
                    "inverse(..) needs `{what}`: the key template of inverse items, as in {INVERSE_EXAMPLE}"
                ),
            );
        }
    }
    Some(InverseAttr::Items { pk: pk.value, sk: sk.value, name: name.value, fields: fields.value })
}
