//! Every placeholder names a field that is stored and read back with the item.

use crate::ast::{Entity, field_list};
use crate::ctxt::Ctxt;

pub fn check(cx: &mut Ctxt, entity: &Entity) {
    // A computed placeholder is an index key's: the primary key is what reads and writes
    // address an item by, given as values.
    for template in std::iter::once(&entity.pk).chain(entity.sk.as_ref()) {
        for (name, span) in template.fields() {
            if entity.field(name).is_some_and(|f| f.computed.is_some()) {
                cx.error_at(
                    span,
                    format!(
                        "placeholder `<{name}>` is computed: computed placeholders belong in #[index] templates; the primary key is made of fields"
                    ),
                );
            }
        }
    }
    for template in entity.templates() {
        for (name, span) in template.fields() {
            let Some(field) = entity.field(name) else {
                unknown_field(cx, entity, name, span);
                continue;
            };
            if field.flatten {
                cx.error_at(
                    span,
                    format!(
                        "placeholder `<{name}>` names field `{name}`, which is #[serde(flatten)]: its fields are spread into the item, so it has no single value to put in a key; use a plain field"
                    ),
                );
            } else if let Some(skip) = field.skip_attr {
                cx.error_at(
                    span,
                    format!(
                        "placeholder `<{name}>` names field `{name}`, which has #[serde({skip})]: a key field must be stored and read back with the item; remove that attribute or use another field"
                    ),
                );
            }
        }
    }
}

/// The error of a placeholder `<name>` that names no field of `entity`.
pub fn unknown_field(cx: &mut Ctxt, entity: &Entity, name: &str, span: proc_macro2::Span) {
    cx.error_at(
        span,
        format!(
            "no field `{name}` on `{}` for placeholder `<{name}>`; fields are: {}",
            entity.ident,
            field_list(&entity.fields)
        ),
    );
}
