//! `#[generated(uuid7)]` / `#[generated(ulid)]` on a field: the kind of time-ordered id the
//! library generates for it when it is unset.

use syn::{Attribute, Ident};

use crate::ctxt::Ctxt;

const EXAMPLE: &str = "#[generated(uuid7)] or #[generated(ulid)]";

/// The kind of a field's `#[generated(..)]` (`uuid7` or `ulid`), if any; a malformed or
/// repeated attribute is reported.
pub fn generated_attr(cx: &mut Ctxt, attrs: &[Attribute]) -> Option<Ident> {
    let mut out: Option<Ident> = None;
    for attr in attrs.iter().filter(|a| a.path().is_ident("generated")) {
        let kind = match &attr.meta {
            syn::Meta::List(list) => list.parse_args::<Ident>().ok(),
            _ => None,
        };
        match kind {
            Some(kind) if kind != "uuid7" && kind != "ulid" => {
                cx.error_spanned_by(&kind, format!("unknown id kind `{kind}`: write {EXAMPLE}"))
            }
            Some(kind) if out.is_some() => cx.error_spanned_by(
                &kind,
                "duplicate #[generated] on one field: a field has one kind of id; keep one",
            ),
            Some(kind) => out = Some(kind),
            None => cx.error_spanned_by(
                attr,
                format!("#[generated] names the kind of id the field is given: {EXAMPLE}"),
            ),
        }
    }
    out
}
