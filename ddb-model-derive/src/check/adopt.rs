//! The rules of the attributes for tables laid out by other code: `#[entity(from_key)]`
//! and `#[entity(none_as_null)]` fields, verbatim placeholders, and the entity's identity.

use crate::ast::{Entity, Identity};
use crate::ctxt::Ctxt;

pub fn check(cx: &mut Ctxt, entity: &Entity) {
    from_key(cx, entity);
    none_as_null(cx, entity);
    verbatim(cx, entity);
    identity(cx, entity);
}

/// A `from_key` field is a placeholder of a key template (so neither the version, which no
/// key holds, nor a skipped field, which no key may hold).
fn from_key(cx: &mut Ctxt, entity: &Entity) {
    for field in &entity.fields {
        let Some(span) = field.from_key else {
            continue;
        };
        let name = field.name();
        if !entity.templates().any(|t| t.fields().any(|(n, _)| n == name)) {
            cx.error_at(
                span,
                format!(
                    "`from_key` on field `{name}`, which no key template holds: the field would be stored nowhere; put `<{name}>` in the entity's `pk`, `sk` or an `#[index]` key, or remove `from_key`"
                ),
            );
        }
    }
}

/// `none_as_null` is on a stored `Option` field: only a `None` can be stored as `NULL`.
fn none_as_null(cx: &mut Ctxt, entity: &Entity) {
    for field in &entity.fields {
        let Some(span) = field.none_as_null else {
            continue;
        };
        let name = field.name();
        let problem = if field.from_key.is_some() {
            format!(
                "`{name}` is also `from_key`: it is stored only in the keys, never as an attribute that could hold `NULL`; remove `none_as_null`"
            )
        } else if let Some(skip) = field.skip_attr.filter(|_| field.skip_serializing) {
            format!("`{name}` is `#[serde({skip})]`: it is never stored; remove `none_as_null`")
        } else if !field.option {
            format!(
                "`{name}` is not an `Option`: only a `None` is stored as `NULL` (or left out); make the field an `Option<..>` or remove `none_as_null`"
            )
        } else {
            continue;
        };
        cx.error_at(span, format!("`none_as_null` on field `{name}`: {problem}"));
    }
}

/// Trees compute their own keys: no verbatim placeholder on a `#[hierarchy]` entity.
fn verbatim(cx: &mut Ctxt, entity: &Entity) {
    if entity.hierarchy.is_none() {
        return;
    }
    for template in entity.templates() {
        for (span, options) in template.option_spans() {
            cx.error_at(
                span,
                format!(
                    "a `#[hierarchy]` entity's keys are written by its tree, escaped: remove `{options}`"
                ),
            );
        }
    }
}

/// Trees keep bookkeeping items next to the nodes, told apart by the table's type attribute.
fn identity(cx: &mut Ctxt, entity: &Entity) {
    if entity.hierarchy.is_none() {
        return;
    }
    let message = "a `#[hierarchy]` entity is told apart from its tree's bookkeeping items by the table's type attribute: remove this setting";
    match &entity.identity {
        Identity::Table => {}
        Identity::Tagged(lit) => cx.error_spanned_by(lit, message),
        Identity::Keys(flag) => cx.error_spanned_by(flag, message),
    }
}
