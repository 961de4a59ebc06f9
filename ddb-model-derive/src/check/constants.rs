//! The rules of `#[entity(constant(..))]`: each constant attribute is named once and is no
//! attribute the entity stores otherwise (a field, its own type attribute, the library's
//! bookkeeping). Clashes with the table's own attributes are `expand::checks`'.

use super::{TREE_KIDS_ATTR, TREE_NESTED_ATTRS, TREE_REV_ATTR, TREE_UP_ATTR};
use crate::ast::{Entity, Identity};
use crate::ctxt::Ctxt;

/// The name prefix of the attributes an update that returns its result writes for a moment
/// (`ddb_model`'s marker attributes).
const MARKER_PREFIX: &str = "_ddbm.";

pub fn check(cx: &mut Ctxt, entity: &Entity) {
    for (i, constant) in entity.constants.iter().enumerate() {
        let attr = constant.attr.as_str();
        if attr.is_empty() {
            continue; // Reported as it was parsed.
        }
        if entity.constants[..i].iter().any(|c| c.attr == attr) {
            cx.error_at(
                constant.span,
                format!("duplicate constant `{attr}`: an attribute holds one value; keep one"),
            );
            continue;
        }
        let field = entity
            .fields
            .iter()
            .find(|f| f.is_stored() && f.from_key.is_none() && f.attr_name == attr);
        if let Some(field) = field {
            cx.error_at(
                constant.span,
                format!(
                    "constant `{attr}` is the attribute field `{}` is stored as: every write stores the constant there; give the field another attribute name with #[serde(rename = \"...\")], or remove the field",
                    field.name()
                ),
            );
        } else if let Identity::Tagged(lit) = &entity.identity
            && lit.value() == attr
        {
            cx.error_at(
                constant.span,
                format!(
                    "constant `{attr}` is the entity's type attribute (`type_attr`), which holds the entity's name: remove the constant, or set the name with `name = \"..\"`"
                ),
            );
        } else if attr.starts_with(MARKER_PREFIX) {
            cx.error_at(
                constant.span,
                format!("constant `{attr}`: names starting with `{MARKER_PREFIX}` are the library's own; pick another name"),
            );
        } else if entity.hierarchy.is_some()
            && [TREE_REV_ATTR, TREE_UP_ATTR, TREE_KIDS_ATTR]
                .iter()
                .chain(TREE_NESTED_ATTRS)
                .any(|a| *a == attr)
        {
            cx.error_at(
                constant.span,
                format!("constant `{attr}` is an attribute where the tree keeps its bookkeeping; pick another name"),
            );
        }
    }
}
