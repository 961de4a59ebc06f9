//! The rules of `#[derive(KeyPart)]` on an enum: every variant has a key text of its own.

use crate::ast::{KeyPart, KeyPartKind};
use crate::ctxt::Ctxt;

pub fn key_part(cx: &mut Ctxt, key_part: &KeyPart) {
    let KeyPartKind::Enum(variants) = &key_part.kind else {
        return;
    };
    for (i, variant) in variants.iter().enumerate() {
        if variant.text.is_empty() {
            cx.error_at(
                variant.span,
                format!(
                    "the key text of `{}` cannot be empty: give a non-empty rename, or remove it to use the variant name",
                    variant.ident
                ),
            );
        }
        if let Some(first) = variants[..i].iter().find(|v| v.text == variant.text) {
            cx.error_at(
                variant.span,
                format!(
                    "`{}` has the key text `{}`, like `{}`: each variant needs its own text to be read back; give one a different #[key_part(rename = \"...\")]",
                    variant.ident, variant.text, first.ident
                ),
            );
        }
    }
}
