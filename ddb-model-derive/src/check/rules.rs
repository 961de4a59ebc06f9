//! The data rules (`strict`, `validate`, `after_read`, `#[generated]`): a strict entity knows
//! every attribute its items may hold, so none of its fields is `#[serde(flatten)]`; a
//! generated id is a stored field the library does not maintain otherwise.

use crate::ast::Entity;
use crate::ctxt::Ctxt;

pub fn check(cx: &mut Ctxt, entity: &Entity) {
    generated(cx, entity);
    if entity.strict.is_none() {
        return;
    }
    for field in entity.fields.iter().filter(|f| f.flatten) {
        cx.error_spanned_by(
            field.ident,
            format!(
                "`{}` is #[serde(flatten)] on a strict entity: strict reads refuse every attribute the entity does not name, and a flattened field takes attributes no declaration names; declare its fields in the struct, or remove `strict`",
                field.name()
            ),
        );
    }
}

/// A generated id is stored (no serde skip or flatten) and is not a field the library sets
/// otherwise (the version, a timestamp, the expiry).
fn generated(cx: &mut Ctxt, entity: &Entity) {
    let owned = [
        (&entity.version, "the version field"),
        (&entity.created_at, "the `created_at` field"),
        (&entity.updated_at, "the `updated_at` field"),
        (&entity.ttl, "the expiry (`ttl`) field"),
    ];
    for (i, field) in entity.fields.iter().enumerate() {
        let Some(kind) = &field.generated else { continue };
        if let Some(attr) = field.skip_attr.or(field.flatten.then_some("flatten")) {
            cx.error_spanned_by(
                kind,
                format!(
                    "`{}` has #[serde({attr})], but a generated id is stored with the item; remove one of them",
                    field.name()
                ),
            );
        }
        for (slot, what) in &owned {
            if slot.as_ref().is_some_and(|(j, _)| *j == i) {
                cx.error_spanned_by(
                    kind,
                    format!(
                        "`{}` is {what}, which the library sets on every write: it cannot also be a generated id",
                        field.name()
                    ),
                );
            }
        }
    }
}
