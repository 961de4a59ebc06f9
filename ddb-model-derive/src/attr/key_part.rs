//! `#[key_part(via_str)]` and `#[key_part(rename_all = "..")]` on a type, and
//! `#[key_part(rename = "..")]` on an enum variant.

use syn::{Attribute, LitStr};

use super::serde::RenameRule;
use super::{Slot, flag, lit_value, skip_value, unknown_key};
use crate::ctxt::Ctxt;

pub struct KeyPartAttrs {
    pub via_str: Slot<syn::Path>,
    /// serde's rule for the variants' key texts (a variant's own `rename` wins).
    pub rename_all: Slot<RenameRule>,
}

pub fn key_part_container(cx: &mut Ctxt, attrs: &[Attribute]) -> KeyPartAttrs {
    let mut out = KeyPartAttrs {
        via_str: Slot::new("key_part", "via_str"),
        rename_all: Slot::new("key_part", "rename_all"),
    };
    for attr in attrs.iter().filter(|a| a.path().is_ident("key_part")) {
        let result = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("via_str") {
                flag(cx, &meta, "key_part")?;
                out.via_str.set(cx, &meta.path, Some(meta.path.clone()));
                Ok(())
            } else if meta.path.is_ident("rename_all") {
                let rule = lit_value(cx, &meta, "rename_all = \"lowercase\"")?.and_then(|lit| {
                    let rule = RenameRule::from_str(&lit.value());
                    if rule.is_none() {
                        cx.error_spanned_by(
                            &lit,
                            format!(
                                "unknown rule `{}`; `rename_all` takes one of serde's: {}",
                                lit.value(),
                                RenameRule::NAMES
                            ),
                        );
                    }
                    rule
                });
                out.rename_all.set(cx, &meta.path, rule);
                Ok(())
            } else if meta.path.is_ident("rename") {
                cx.error_spanned_by(
                    &meta.path,
                    "`rename` goes on an enum variant, as in #[key_part(rename = \"open\")] Open; on the type, the keys are `via_str` and `rename_all`",
                );
                skip_value(&meta)
            } else {
                unknown_key(cx, &meta, "key_part", "via_str, rename_all")
            }
        });
        if let Err(err) = result {
            cx.syn_error(err);
        }
    }
    out
}

/// `#[key_part(rename = "...")]` on an enum variant.
pub fn key_part_variant(cx: &mut Ctxt, attrs: &[Attribute]) -> Option<LitStr> {
    let mut rename = Slot::new("key_part", "rename");
    for attr in attrs.iter().filter(|a| a.path().is_ident("key_part")) {
        let result = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("rename") {
                let lit = lit_value(cx, &meta, "rename = \"open\"")?;
                rename.set(cx, &meta.path, lit);
                Ok(())
            } else {
                unknown_key(cx, &meta, "key_part", "rename (on a variant)")
            }
        });
        if let Err(err) = result {
            cx.syn_error(err);
        }
    }
    rename.value
}
