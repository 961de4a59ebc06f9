//! The expiry field (`ttl`): stored, in no key, and no other lifecycle role.

use crate::ast::Entity;
use crate::ctxt::Ctxt;

pub fn check(cx: &mut Ctxt, entity: &Entity) {
    let Some((index, ident)) = &entity.ttl else { return };
    let Some(field) = entity.fields.get(*index) else { return };
    let roles = [
        (&entity.version, "the version", "the version counts writes"),
        (&entity.created_at, "`created_at`", "`created_at` holds when the item was created"),
        (&entity.updated_at, "`updated_at`", "`updated_at` holds when the item was last written"),
    ];
    for (other, role, what) in roles {
        if other.as_ref().is_some_and(|(i, _)| i == index) {
            cx.error_spanned_by(
                ident,
                format!(
                    "`{ident}` is both {role} and the expiry (`ttl`): {what}, the expiry when the service may delete it; give the expiry its own field"
                ),
            );
        }
    }
    if let Some(attr) = field.skip_attr.or(field.flatten.then_some("flatten")) {
        cx.error_spanned_by(
            ident,
            format!(
                "the expiry field `{ident}` has #[serde({attr})], but the service reads the expiry from the stored item; remove that attribute"
            ),
        );
    }
    let name = field.name();
    let in_key = entity.templates().any(|t| t.fields().any(|(n, _)| n == name));
    let computed_from = entity
        .fields
        .iter()
        .find(|f| f.computed.as_ref().is_some_and(|c| c.args.iter().any(|a| *a == *field.ident)));
    if in_key {
        cx.error_spanned_by(
            ident,
            format!(
                "the expiry field `{ident}` fills placeholder `<{name}>` of a key template: an expiry is stored as a number of seconds in its own attribute, and extending it would move the item to another key; key the item on other fields"
            ),
        );
    } else if let Some(computed) = computed_from {
        cx.error_spanned_by(
            ident,
            format!(
                "the expiry field `{ident}` is an argument of computed placeholder `<{}>`: an expiry is stored as a number of seconds, and extending it would move the item in the index; compute the key from other fields",
                computed.name()
            ),
        );
    }
}
