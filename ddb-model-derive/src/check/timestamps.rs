//! The timestamp fields (`created_at`, `updated_at`): stored, one role each, in no key.

use crate::ast::Entity;
use crate::ctxt::Ctxt;

pub fn check(cx: &mut Ctxt, entity: &Entity) {
    if let (Some((c, _)), Some((u, ident))) = (&entity.created_at, &entity.updated_at)
        && c == u
    {
        cx.error_spanned_by(
            ident,
            format!(
                "`{ident}` is both `created_at` and `updated_at`: the first is set when the item is created and kept, the second by every write; give each its own field"
            ),
        );
    }
    let version = entity.version.as_ref().map(|(i, _)| *i);
    for (field, (ident, created)) in entity.timestamp_fields() {
        let role = if created { "created_at" } else { "updated_at" };
        if version.is_some_and(|v| entity.fields.get(v).is_some_and(|f| f.ident == field.ident)) {
            cx.error_spanned_by(
                ident,
                format!(
                    "`{ident}` is both the version and `{role}`: the version counts writes, a timestamp holds a time; give each its own field"
                ),
            );
        }
        if let Some(attr) = field.skip_attr.or(field.flatten.then_some("flatten")) {
            cx.error_spanned_by(
                ident,
                format!(
                    "the `{role}` field `{ident}` has #[serde({attr})], but the time must be stored and read back with the item; remove that attribute"
                ),
            );
        }
        let name = field.name();
        let in_key = entity.templates().find_map(|t| t.fields().find(|(n, _)| *n == name));
        let computed_from = entity.fields.iter().find(|f| {
            f.computed.as_ref().is_some_and(|c| c.args.iter().any(|a| *a == *field.ident))
        });
        if in_key.is_some() {
            cx.error_spanned_by(
                ident,
                format!(
                    "the `{role}` field `{ident}` fills placeholder `<{name}>` of a key template: the write sets the time after the keys are made, so the stored key would not match it; key the item on other fields"
                ),
            );
        } else if let Some(computed) = computed_from {
            cx.error_spanned_by(
                ident,
                format!(
                    "the `{role}` field `{ident}` is an argument of computed placeholder `<{}>`: the write sets the time after the keys are made, so the stored key would not match it; compute the key from other fields",
                    computed.name()
                ),
            );
        }
    }
}
