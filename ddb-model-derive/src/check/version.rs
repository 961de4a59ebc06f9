//! The version field is stored, and in no key (every write changes it).

use crate::ast::Entity;
use crate::ctxt::Ctxt;

pub fn check(cx: &mut Ctxt, entity: &Entity) {
    let Some((index, ident)) = &entity.version else {
        return;
    };
    let Some(field) = entity.fields.get(*index) else {
        return;
    };
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
