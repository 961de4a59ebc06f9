//! `#[unique]` / `#[unique(scope = "email")]` on a field, and `#[entity(unique(org, name))]`
//! (with an optional `scope = ".."` among the fields) for a composite constraint.

use proc_macro2::Span;
use syn::meta::ParseNestedMeta;
use syn::{Attribute, Ident, LitStr, Meta};

use super::{Slot, lit_value, skip_value, unknown_key};
use crate::ctxt::Ctxt;

/// One constraint as written.
pub struct UniqueAttr {
    /// The span of `unique`.
    pub span: Span,
    /// `scope = ".."`.
    pub scope: Option<LitStr>,
    /// The fields of `#[entity(unique(a, b))]`; empty for `#[unique]` on a field.
    pub fields: Vec<Ident>,
}

/// The longest scope name.
const MAX_SCOPE: usize = 64;

/// `#[unique]` attributes on a field, in order (a repeat is reported by the caller).
pub fn unique_field_attrs(cx: &mut Ctxt, attrs: &[Attribute]) -> Vec<UniqueAttr> {
    let mut out = Vec::new();
    for attr in attrs.iter().filter(|a| a.path().is_ident("unique")) {
        let span = attr.path().get_ident().map_or_else(Span::call_site, Ident::span);
        let mut scope: Slot<LitStr> = Slot::new("unique", "scope");
        match &attr.meta {
            Meta::Path(_) => {}
            Meta::NameValue(nv) => {
                cx.error_spanned_by(
                    &nv.value,
                    "#[unique] takes no `= value`: write #[unique], or #[unique(scope = \"email\")] to share a namespace with other fields",
                );
            }
            Meta::List(_) => {
                let result = attr.parse_nested_meta(|meta| {
                    if meta.path.is_ident("scope") {
                        let lit = scope_value(cx, &meta)?;
                        scope.set(cx, &meta.path, lit);
                    } else {
                        unknown_key(cx, &meta, "unique", "scope")?;
                    }
                    Ok(())
                });
                if let Err(err) = result {
                    cx.syn_error(err);
                }
            }
        }
        out.push(UniqueAttr { span, scope: scope.value, fields: Vec::new() });
    }
    out
}

/// `unique(a, b, scope = "..")` inside `#[entity(..)]`.
pub fn entity_unique(cx: &mut Ctxt, meta: &ParseNestedMeta) -> syn::Result<Option<UniqueAttr>> {
    let span = meta.path.get_ident().map_or_else(Span::call_site, Ident::span);
    if !meta.input.peek(syn::token::Paren) {
        cx.error_spanned_by(
            &meta.path,
            "`unique` in #[entity] names the fields whose combination is unique, as in #[entity(unique(org, name))]; for one field, put #[unique] on the field",
        );
        skip_value(meta)?;
        return Ok(None);
    }
    let mut scope: Slot<LitStr> = Slot::new("unique", "scope");
    let mut fields: Vec<Ident> = Vec::new();
    let mut malformed = false;
    meta.parse_nested_meta(|inner| {
        if inner.path.is_ident("scope") {
            let lit = scope_value(cx, &inner)?;
            scope.set(cx, &inner.path, lit);
        } else if let Some(ident) =
            inner.path.get_ident().filter(|_| !inner.input.peek(syn::Token![=]))
        {
            fields.push(ident.clone());
            skip_value(&inner)?;
        } else {
            cx.error_spanned_by(
                &inner.path,
                "expected a field name or `scope = \"..\"`, as in #[entity(unique(org, name))]",
            );
            malformed = true;
            skip_value(&inner)?;
        }
        Ok(())
    })?;
    if malformed {
        return Ok(None);
    }
    if fields.len() < 2 {
        cx.error_at(
            span,
            "a composite unique constraint names at least two fields, as in #[entity(unique(org, name))]; for one field, put #[unique] on the field",
        );
        return Ok(None);
    }
    Ok(Some(UniqueAttr { span, scope: scope.value, fields }))
}

/// `scope = "name"`: ASCII letters, digits, `_`, `-` and `.`, at most [`MAX_SCOPE`].
fn scope_value(cx: &mut Ctxt, meta: &ParseNestedMeta) -> syn::Result<Option<LitStr>> {
    let lit = lit_value(cx, meta, "scope = \"email\"")?;
    Ok(lit.and_then(|lit| {
        let text = lit.value();
        let valid = !text.is_empty()
            && text.len() <= MAX_SCOPE
            && text.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
        if valid {
            Some(lit)
        } else {
            cx.error_spanned_by(
                &lit,
                format!(
                    "unique scope {text:?} is not a scope name: use 1 to {MAX_SCOPE} ASCII letters, digits, `_`, `-` or `.`, as in scope = \"email\""
                ),
            );
            None
        }
    }))
}
