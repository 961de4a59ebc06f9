//! The rules of `#[derive(Collection)]`: at least one entity variant, at most one `other`.

use crate::ast::Collection;
use crate::ctxt::Ctxt;

pub fn collection(cx: &mut Ctxt, collection: &Collection) {
    for extra in collection.variants.iter().filter(|v| v.other).skip(1) {
        cx.error_spanned_by(
            extra.ident,
            "only one variant can be #[collection(other)]: it receives every item of an unlisted type",
        );
    }
    if collection.is_enum && collection.entities().next().is_none() {
        cx.error_spanned_by(collection.ident, "a collection needs at least one entity variant");
    }
}
