//! The data rules (`strict`, `validate`, `after_read`): a strict entity knows every attribute
//! its items may hold, so none of its fields is `#[serde(flatten)]`.

use crate::ast::Entity;
use crate::ctxt::Ctxt;

pub fn check(cx: &mut Ctxt, entity: &Entity) {
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
