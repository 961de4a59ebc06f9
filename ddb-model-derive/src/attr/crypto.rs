//! `#[encrypt]` and `#[sign_only]` on a field: what the AWS Database Encryption SDK does with
//! its attribute (every other attribute of an entity with either is signed).

use proc_macro2::Span;
use quote::ToTokens;
use syn::{Attribute, Ident, Meta};

use crate::ctxt::Ctxt;

/// The action of a field's `#[encrypt]` or `#[sign_only]`.
#[derive(Clone, Copy)]
pub struct CryptoAttr {
    /// The span of `encrypt` / `sign_only`.
    pub span: Span,
    /// `#[encrypt]` (else `#[sign_only]`).
    pub encrypt: bool,
}

impl CryptoAttr {
    /// The attribute as written.
    pub fn name(self) -> &'static str {
        if self.encrypt { "#[encrypt]" } else { "#[sign_only]" }
    }
}

/// The field's `#[encrypt]` or `#[sign_only]`, if any (both, a repeat or arguments: errors).
pub fn crypto_attr(cx: &mut Ctxt, attrs: &[Attribute]) -> Option<CryptoAttr> {
    let mut out: Option<CryptoAttr> = None;
    for attr in attrs {
        let encrypt = attr.path().is_ident("encrypt");
        if !encrypt && !attr.path().is_ident("sign_only") {
            continue;
        }
        let span = attr.path().get_ident().map_or_else(Span::call_site, Ident::span);
        let this = CryptoAttr { span, encrypt };
        if !matches!(attr.meta, Meta::Path(_)) {
            cx.error_spanned_by(
                attr.meta.to_token_stream(),
                format!("{} takes no arguments: write it alone on the field", this.name()),
            );
            continue;
        }
        match out {
            Some(first) if first.encrypt == encrypt => {
                cx.error_at(span, format!("duplicate {} on one field", this.name()))
            }
            Some(first) => cx.error_at(
                span,
                format!(
                    "{} and {} on one field: an encrypted field is signed too; keep one",
                    first.name(),
                    this.name()
                ),
            ),
            None => out = Some(this),
        }
    }
    out
}
