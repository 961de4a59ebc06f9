//! Cross-field rules of `#[derive(Entity)]`. Type rules (a key field implements `KeyPart`, the
//! version is an integer, an index exists in the table) are checked by the compiler on the
//! generated code, at the user's spans; see `expand::checks`.

use crate::ast::{Entity, field_list};
use crate::ctxt::Ctxt;

pub fn check(cx: &mut Ctxt, entity: &Entity) {
    check_placeholders(cx, entity);
    check_version(cx, entity);
}

fn check_placeholders(cx: &mut Ctxt, entity: &Entity) {
    for template in entity.templates() {
        for (name, span) in template.fields() {
            let Some(field) = entity.field(name) else {
                cx.error_at(
                    span,
                    format!(
                        "no field `{name}` on `{}` for placeholder `<{name}>`; fields are: {}",
                        entity.ident,
                        field_list(&entity.fields)
                    ),
                );
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

fn check_version(cx: &mut Ctxt, entity: &Entity) {
    let Some((index, ident)) = &entity.version else {
        return;
    };
    let field = &entity.fields[*index];
    if let Some(attr) = field.skip_attr.or(field.flatten.then_some("flatten")) {
        cx.error_spanned_by(
            ident,
            format!(
                "the version field `{ident}` has #[serde({attr})], but the version must be stored and read back with the item; remove that attribute"
            ),
        );
    }
    let name = field.name();
    if entity.templates().any(|t| t.fields().any(|(n, _)| n == name)) {
        cx.error_spanned_by(
            ident,
            format!(
                "the version field `{ident}` fills placeholder `<{name}>` of a key template: every write changes the version, so the item's key would change with it; key the item on other fields"
            ),
        );
    }
}
