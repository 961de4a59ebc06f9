//! `#[hierarchy(..)]`: the entity is the node type of a tree.

use proc_macro2::Span;
use syn::meta::ParseNestedMeta;
use syn::{Attribute, Ident};

use super::{Slot, ident_value, unknown_key, value_expr};
use crate::ctxt::Ctxt;

pub struct HierarchyAttrs {
    /// The `hierarchy` token of the attribute, for errors about the whole declaration.
    pub span: Span,
    pub path: Slot<Ident>,
    pub parent: Slot<Ident>,
    pub index: Slot<Ident>,
    pub max_depth: Slot<syn::LitInt>,
    pub strategy: Slot<Ident>,
}

const HIERARCHY_KEYS: &str = "strategy, path, parent, index, max_depth";

/// The strategies `#[hierarchy(strategy = ..)]` accepts.
const STRATEGIES: &[&str] = &["path", "closure", "adjacency", "nested_set"];

/// The `#[hierarchy]` attribute, if there is one (a second one is an error).
pub fn hierarchy_attrs(cx: &mut Ctxt, attrs: &[Attribute]) -> Option<HierarchyAttrs> {
    let mut out: Option<HierarchyAttrs> = None;
    for attr in attrs.iter().filter(|a| a.path().is_ident("hierarchy")) {
        if out.is_some() {
            cx.error_spanned_by(
                attr.path(),
                "duplicate #[hierarchy]: an entity is the node of one tree; keep one attribute",
            );
            continue;
        }
        let span = attr.path().get_ident().map_or_else(Span::call_site, Ident::span);
        let mut h = HierarchyAttrs {
            span,
            path: Slot::new("hierarchy", "path"),
            parent: Slot::new("hierarchy", "parent"),
            index: Slot::new("hierarchy", "index"),
            max_depth: Slot::new("hierarchy", "max_depth"),
            strategy: Slot::new("hierarchy", "strategy"),
        };
        if matches!(attr.meta, syn::Meta::Path(_)) {
            cx.error_spanned_by(
                attr.path(),
                "#[hierarchy] needs the path field and the index for children, as in #[hierarchy(path = path, index = gsi1)]",
            );
            // Reported once, here, not again as missing keys.
            h.path.given = true;
            h.index.given = true;
            out = Some(h);
            continue;
        }
        if let Err(err) = attr.parse_nested_meta(|meta| key(cx, &meta, &mut h)) {
            cx.syn_error(err);
        }
        out = Some(h);
    }
    out
}

/// One `key = value` of `#[hierarchy(..)]`.
fn key(cx: &mut Ctxt, meta: &ParseNestedMeta, h: &mut HierarchyAttrs) -> syn::Result<()> {
    if meta.path.is_ident("path") {
        let v = ident_value(cx, meta, "a field name", "path = path")?;
        h.path.set(cx, &meta.path, v);
    } else if meta.path.is_ident("parent") {
        let v = ident_value(cx, meta, "a field name", "parent = parent")?;
        h.parent.set(cx, &meta.path, v);
    } else if meta.path.is_ident("index") {
        let v = ident_value(cx, meta, "an index name", "index = gsi1")?;
        h.index.set(cx, &meta.path, v);
    } else if meta.path.is_ident("strategy") {
        let v = ident_value(cx, meta, "a strategy name", "strategy = path")?;
        if let Some(v) = v.as_ref().filter(|v| !STRATEGIES.contains(&v.to_string().as_str())) {
            cx.error_spanned_by(
                v,
                format!("unknown tree strategy `{v}`; expected one of: {}", STRATEGIES.join(", ")),
            );
        }
        h.strategy.set(cx, &meta.path, v);
    } else if meta.path.is_ident("max_depth") {
        let expr = value_expr(cx, meta, "max_depth = 32")?;
        let lit = expr.and_then(|expr| match expr {
            syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Int(lit), .. }) => Some(lit),
            other => {
                cx.error_spanned_by(&other, "`max_depth` takes an integer, as in max_depth = 32");
                None
            }
        });
        h.max_depth.set(cx, &meta.path, lit);
    } else {
        unknown_key(cx, meta, "hierarchy", HIERARCHY_KEYS)?;
    }
    Ok(())
}
