//! `#[key_part(via_str)]` on a type and `#[key_part(rename = "..")]` on an enum variant.

use syn::{Attribute, LitStr};

use super::{Slot, flag, lit_value, skip_value, unknown_key};
use crate::ctxt::Ctxt;

pub struct KeyPartAttrs {
    pub via_str: Slot<syn::Path>,
}

pub fn key_part_container(cx: &mut Ctxt, attrs: &[Attribute]) -> KeyPartAttrs {
    let mut out = KeyPartAttrs { via_str: Slot::new("key_part", "via_str") };
    for attr in attrs.iter().filter(|a| a.path().is_ident("key_part")) {
        let result = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("via_str") {
                flag(cx, &meta, "key_part")?;
                out.via_str.set(cx, &meta.path, Some(meta.path.clone()));
                Ok(())
            } else if meta.path.is_ident("rename") {
                cx.error_spanned_by(
                    &meta.path,
                    "`rename` goes on an enum variant, as in #[key_part(rename = \"open\")] Open; on the type, the only key is `via_str`",
                );
                skip_value(&meta)
            } else {
                unknown_key(cx, &meta, "key_part", "via_str")
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
