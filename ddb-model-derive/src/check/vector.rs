//! The rules of `#[vector(index)]` fields: a stored field of its own per index, and an
//! entity whose attributes are all known by name (a search reads them back by name).

use crate::ast::Entity;
use crate::ctxt::Ctxt;

pub fn check(cx: &mut Ctxt, entity: &Entity) {
    let owner = entity.ident;
    let mut seen: Vec<String> = Vec::new();
    for field in entity.fields.iter() {
        let Some(index) = &field.vector else { continue };
        let name = field.name();
        let index_name = index.to_string();
        if seen.contains(&index_name) {
            cx.error_spanned_by(
                index,
                format!("vector index `{index_name}` is named by another field of `{owner}`: an item has one vector per index"),
            );
        }
        seen.push(index_name.clone());
        let unstored = if field.from_key.is_some() {
            Some("`#[entity(from_key)]` (stored in the keys only)".to_owned())
        } else {
            field.skip_attr.filter(|_| field.skip_serializing).map(|a| format!("`#[serde({a})]`"))
        };
        if let Some(why) = unstored {
            cx.error_spanned_by(
                index,
                format!("field `{name}` holds the vectors of `{index_name}`, but it is not stored ({why}): store it, or remove #[vector]"),
            );
        } else if field.flatten {
            cx.error_spanned_by(
                index,
                format!("field `{name}` is flattened: a vector is one attribute; remove #[serde(flatten)] or #[vector]"),
            );
        }
        if let Some(flat) = entity.fields.iter().find(|f| f.flatten && f.vector.is_none()) {
            cx.error_spanned_by(
                index,
                format!(
                    "`{owner}` has a flattened field (`{}`): a vector search reads an entity's attributes by name, and a flattened field's are not known; remove #[serde(flatten)]",
                    flat.name()
                ),
            );
        }
    }
}
