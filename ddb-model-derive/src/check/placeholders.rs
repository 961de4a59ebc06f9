//! Every placeholder names a field that is stored and read back with the item.

use crate::ast::{Entity, field_list};
use crate::ctxt::Ctxt;
use crate::template::Segment;

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
    formats(cx, entity);
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

/// A format that does not read every value back as itself (`:lower`, `:iso8601(ms)`): the
/// field cannot be `from_key` (it would hold the key's text, not its value), and every key
/// that names it writes it alike (an index key rewritten from the primary key's text holds
/// what the primary key holds).
fn formats(cx: &mut Ctxt, entity: &Entity) {
    let placeholders: Vec<_> = entity.templates().flat_map(|t| t.formats()).collect();
    let mut reported: Vec<&str> = Vec::new();
    for template in entity.templates() {
        for segment in &template.segments {
            let Segment::Field { name, span, format, .. } = segment else { continue };
            let Some(field) = entity.field(name) else { continue };
            let lossy = placeholders.iter().find(|(n, _, f)| *n == name.as_str() && !f.lossless());
            let Some((_, _, lossy)) = lossy else { continue };
            let options = lossy.options();
            if format.as_ref() != Some(lossy) {
                let here = format.map(|f| f.options()).unwrap_or_default();
                cx.error_at(
                    *span,
                    format!(
                        "`<{name}{here}>`: field `{name}` is written `<{name}{options}>` in another key, which does not read every value back as itself; write it `<{name}{options}>` in every key, so that all of them hold the same text"
                    ),
                );
            } else if field.from_key.is_some() && !reported.contains(&name.as_str()) {
                reported.push(name);
                cx.error_at(
                    *span,
                    format!(
                        "`<{name}{options}>` does not read every value back as itself (a text in one case, a datetime cut to a precision), and field `{name}` is `#[entity(from_key)]`, read from the key: it would hold the key's text, not the value written. Remove `from_key`, so that the field keeps its own attribute"
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
