//! `#[collection(other)]` on the variant of a collection that receives unlisted types.

use syn::Attribute;

use crate::ctxt::Ctxt;

/// True when the variant is `#[collection(other)]`.
pub fn is_other(cx: &mut Ctxt, attrs: &[Attribute]) -> bool {
    let mut other = false;
    for attr in attrs.iter().filter(|a| a.path().is_ident("collection")) {
        let result = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("other") {
                if other {
                    cx.error_spanned_by(&meta.path, "duplicate `other` in #[collection]");
                }
                other = true;
            } else {
                cx.error_spanned_by(
                    &meta.path,
                    "unknown key in #[collection]; the only key is `other`, on the variant that receives items of unlisted types",
                );
            }
            Ok(())
        });
        if let Err(e) = result {
            cx.syn_error(e);
        }
    }
    other
}
