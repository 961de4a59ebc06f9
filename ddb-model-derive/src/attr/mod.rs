//! Attribute parsing, one file per attribute family. Each parser reads what is written into
//! `Slot`s that remember the tokens they came from, reports malformed attributes (unknown or
//! repeated keys, values of the wrong kind) and nothing else: what the values mean is the
//! business of `ast` and `check`.

mod collection;
mod crypto;
mod edge;
mod entity;
mod generated;
mod hierarchy;
mod index;
mod key_part;
mod projection;
mod serde;
mod table;
mod unique;

pub use collection::is_other;
pub use crypto::{CryptoAttr, crypto_attr};
pub use edge::{InverseAttr, edge_attrs};
pub use entity::{ConstantAttr, entity_attrs, field_attrs, vector_attr};
pub use generated::generated_attr;
pub use hierarchy::{HierarchyAttrs, hierarchy_attrs};
pub use index::{ComputedAttr, FieldList, IndexAttr, index_attrs};
pub use key_part::{key_part_container, key_part_variant};
pub use projection::projection_attrs;
pub use serde::{RenameRule, serde_container, serde_default, serde_field};
pub use table::{GsiAttr, KeyList, METRICS, VectorAttr, table_attrs};
pub use unique::{UniqueAttr, entity_unique, unique_field_attrs};

use quote::ToTokens;
use syn::meta::ParseNestedMeta;
use syn::{Ident, LitStr, Token};

use crate::ctxt::Ctxt;

/// A value set at most once; a second setting is an error at the second occurrence.
pub struct Slot<T> {
    attr: &'static str,
    key: &'static str,
    pub value: Option<T>,
    /// The key was written, even if its value was invalid (that error is reported already).
    pub given: bool,
}

impl<T> Slot<T> {
    pub fn new(attr: &'static str, key: &'static str) -> Self {
        Slot { attr, key, value: None, given: false }
    }

    /// Records the key written at `at` with its value (`None`: invalid, already reported).
    pub fn set<S: ToTokens>(&mut self, cx: &mut Ctxt, at: S, value: Option<T>) {
        if self.given {
            cx.error_spanned_by(
                at,
                format!(
                    "duplicate `{}` in #[{}]: it is set already; keep one",
                    self.key, self.attr
                ),
            );
        } else {
            self.given = true;
            self.value = value;
        }
    }
}

fn key_text(meta: &ParseNestedMeta) -> String {
    meta.path.to_token_stream().to_string().replace(' ', "")
}

/// Reports a key the parser does not know and skips its value, so the keys after it are
/// still read (and a misspelt key does not also cause "missing key" errors).
fn unknown_key(
    cx: &mut Ctxt,
    meta: &ParseNestedMeta,
    attr: &str,
    expected: &str,
) -> syn::Result<()> {
    cx.error_spanned_by(
        &meta.path,
        format!("unknown key `{}` in #[{attr}]; expected one of: {expected}", key_text(meta)),
    );
    skip_value(meta)
}

/// Skips the value of a key this parser does not handle (`= expr` or `(...)`).
fn skip_value(meta: &ParseNestedMeta) -> syn::Result<()> {
    if meta.input.peek(Token![=]) {
        meta.value()?.parse::<syn::Expr>()?;
    } else if meta.input.peek(syn::token::Paren) {
        meta.parse_nested_meta(|inner| skip_value(&inner))?;
    }
    Ok(())
}

/// The `= value` of a key as an expression; `None` (reported) when the key has no `=`.
fn value_expr(
    cx: &mut Ctxt,
    meta: &ParseNestedMeta,
    example: &str,
) -> syn::Result<Option<syn::Expr>> {
    if !meta.input.peek(Token![=]) {
        cx.error_spanned_by(
            &meta.path,
            format!("`{}` needs a value, as in {example}", key_text(meta)),
        );
        skip_value(meta)?;
        return Ok(None);
    }
    Ok(Some(meta.value()?.parse()?))
}

/// A `key = "text"` value; `None` (reported) when it is not a string literal.
fn lit_value(cx: &mut Ctxt, meta: &ParseNestedMeta, example: &str) -> syn::Result<Option<LitStr>> {
    Ok(value_expr(cx, meta, example)?.and_then(|expr| match expr {
        syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(lit), .. }) => Some(lit),
        other => {
            cx.error_spanned_by(
                &other,
                format!("`{}` takes a string literal, as in {example}", key_text(meta)),
            );
            None
        }
    }))
}

/// A `key = path` value; `None` (reported) otherwise.
fn path_value(
    cx: &mut Ctxt,
    meta: &ParseNestedMeta,
    what: &str,
    example: &str,
) -> syn::Result<Option<syn::Path>> {
    Ok(value_expr(cx, meta, example)?.and_then(|expr| match expr {
        syn::Expr::Path(syn::ExprPath { qself: None, path, .. }) => Some(path),
        other => {
            let quoted =
                matches!(&other, syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(_), .. }));
            let how = if quoted { " without quotes" } else { "" };
            cx.error_spanned_by(
                &other,
                format!("`{}` takes {what}{how}, as in {example}", key_text(meta)),
            );
            None
        }
    }))
}

/// A key that takes no value (`no_sort_key`); a value is reported and skipped.
fn flag(cx: &mut Ctxt, meta: &ParseNestedMeta, attr: &str) -> syn::Result<()> {
    if meta.input.peek(Token![=]) || meta.input.peek(syn::token::Paren) {
        let key = key_text(meta);
        cx.error_spanned_by(
            &meta.path,
            format!("`{key}` takes no value: write it alone, as in #[{attr}({key})]"),
        );
        skip_value(meta)?;
    }
    Ok(())
}

/// A `key = name` value: one identifier (a field or an index name); `None` (reported)
/// otherwise.
fn ident_value(
    cx: &mut Ctxt,
    meta: &ParseNestedMeta,
    what: &str,
    example: &str,
) -> syn::Result<Option<Ident>> {
    let path = path_value(cx, meta, what, example)?;
    Ok(path.and_then(|path| match path.get_ident() {
        Some(ident) => Some(ident.clone()),
        None => {
            cx.error_spanned_by(
                &path,
                format!("`{}` takes {what}, as in {example}", key_text(meta)),
            );
            None
        }
    }))
}
