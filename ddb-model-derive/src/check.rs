//! Cross-field rules of `#[derive(Entity)]`. Type rules (a key field implements `KeyPart`, the
//! version is an integer, an index exists in the table) are checked by the compiler on the
//! generated code, at the user's spans; see `expand::checks`.

use crate::ast::{Entity, Strategy, field_list};
use crate::ctxt::Ctxt;

pub fn check(cx: &mut Ctxt, entity: &Entity) {
    check_placeholders(cx, entity);
    check_version(cx, entity);
    check_hierarchy(cx, entity);
}

/// The attribute where a tree node keeps its revision (`ddb_model::tree::TREE_REV_ATTR`).
pub const TREE_REV_ATTR: &str = "_tree_rev";

/// The attribute where a closure node's own copy keeps its ancestors
/// (`ddb_model::tree::TREE_UP_ATTR`).
pub const TREE_UP_ATTR: &str = "_tree_up";

fn check_hierarchy(cx: &mut Ctxt, entity: &Entity) {
    let Some(h) = &entity.hierarchy else {
        return;
    };
    if h.strategy != Strategy::Path {
        check_id_hierarchy(cx, entity);
        return;
    }
    let path_name = h.path.as_ref().map(|(i, _)| entity.fields[*i].name());
    match &entity.sk {
        None => cx.error_at(
            h.span,
            format!(
                "a tree keeps each node's path in the sort key: give `{}` an `sk` template ending with the path field, as in #[entity(sk = \"NODE#<{}>\")]",
                entity.ident,
                path_name.as_deref().unwrap_or("path")
            ),
        ),
        Some(sk) => {
            if let Some(name) = &path_name {
                let fields: Vec<&str> = sk.fields().map(|(n, _)| n).collect();
                let ends_with_path = matches!(
                    sk.segments.last(),
                    Some(crate::template::Segment::Field { name: last, .. }) if last == name
                );
                if fields != [name.as_str()] || !ends_with_path {
                    cx.error_at(
                        entity.span_of_sk(),
                        format!(
                            "the sort key of a tree node must be literal text followed by the path field and nothing else, as in sk = \"NODE#<{name}>\": prefix queries on it then select whole subtrees"
                        ),
                    );
                }
            }
        }
    }
    if let Some(name) = &path_name {
        for (placeholder, span) in entity.pk.fields() {
            if placeholder == name {
                cx.error_at(
                    span,
                    format!(
                        "the node path `{name}` cannot be part of the partition key: the partition key names the tree (one tree per partition), the sort key the node"
                    ),
                );
            }
        }
    }
    if let Some(index) = &h.index
        && entity.indexes.iter().any(|i| i.name == *index)
    {
        cx.error_spanned_by(
            index,
            format!(
                "index `{index}` is also given an #[index({index})] key: the tree writes its own keys to the index it uses for children; use another index for one of them"
            ),
        );
    }
    for field in entity.fields.iter().filter(|f| f.is_stored()) {
        if field.attr_name == TREE_REV_ATTR {
            cx.error_spanned_by(
                field.ident,
                format!(
                    "field `{}` is stored as attribute `{TREE_REV_ATTR}`, where tree nodes keep their revision; give the field another attribute name with #[serde(rename = \"...\")]",
                    field.name()
                ),
            );
        }
    }
}

/// The rules of the closure and adjacency strategies: the sort key is literal text and the
/// node's id; the parent field is in no key.
fn check_id_hierarchy(cx: &mut Ctxt, entity: &Entity) {
    let Some(h) = &entity.hierarchy else {
        return;
    };
    let name = h.strategy.name();
    let parent_name = h.parent.as_ref().map(|(i, _)| entity.fields[*i].name());
    match &entity.sk {
        None => cx.error_at(
            h.span,
            format!(
                "a {name} tree keeps each node's id in the sort key: give `{}` an `sk` template made of literal text and the id field, as in #[entity(sk = \"NODE#<id>\")]",
                entity.ident
            ),
        ),
        Some(sk) => {
            let fields: Vec<&str> = sk.fields().map(|(n, _)| n).collect();
            let ends_with_id = matches!(
                (sk.segments.last(), fields.as_slice()),
                (Some(crate::template::Segment::Field { name: last, .. }), [only]) if last == only
            );
            if !ends_with_id {
                cx.error_at(
                    entity.span_of_sk(),
                    format!(
                        "the sort key of a {name} node must be literal text followed by the node's id field and nothing else, as in sk = \"NODE#<id>\": the id addresses the node and its copies"
                    ),
                );
            } else if let Some(id) = fields.first() {
                if parent_name.as_deref() == Some(*id)
                    && let Some((_, ident)) = &h.parent
                {
                    cx.error_spanned_by(
                        ident,
                        format!(
                            "the parent field cannot be the node's id `{id}`: name a separate field `parent: Option<..>` holding the parent's id"
                        ),
                    );
                }
                for (placeholder, span) in entity.pk.fields() {
                    if placeholder == *id {
                        cx.error_at(
                            span,
                            format!(
                                "the node id `{id}` cannot be part of the partition key: the partition key names the tree (one tree per partition), the sort key the node"
                            ),
                        );
                    }
                }
            }
        }
    }
    if let (Some(parent), Some((_, ident))) = (&parent_name, &h.parent) {
        let in_key = entity.templates().any(|t| t.fields().any(|(n, _)| n == parent));
        if in_key && entity.sk.as_ref().is_none_or(|sk| !sk.fields().any(|(n, _)| n == parent)) {
            cx.error_spanned_by(
                ident,
                format!(
                    "the parent field `{parent}` fills a placeholder of a key template: a move changes the parent, so the key would change with it; key the node on other fields"
                ),
            );
        }
        if let Some(field) = h.parent.as_ref().map(|(i, _)| &entity.fields[*i])
            && (field.skip_attr.is_some() || field.flatten)
        {
            cx.error_spanned_by(
                ident,
                format!(
                    "the parent field `{parent}` must be stored and read back with the node; remove its serde skip or flatten attribute"
                ),
            );
        }
    }
    if let Some(index) = &h.index
        && entity.indexes.iter().any(|i| i.name == *index)
    {
        cx.error_spanned_by(
            index,
            format!(
                "index `{index}` is also given an #[index({index})] key: the tree writes its own keys to the index it uses for children; use another index for one of them"
            ),
        );
    }
    reserved_attrs(cx, entity, &[TREE_REV_ATTR, TREE_UP_ATTR, "_tree_kids"]);
}

/// Fields stored under an attribute the tree keeps its bookkeeping in.
fn reserved_attrs(cx: &mut Ctxt, entity: &Entity, reserved: &[&str]) {
    for field in entity.fields.iter().filter(|f| f.is_stored()) {
        if reserved.contains(&field.attr_name.as_str()) {
            cx.error_spanned_by(
                field.ident,
                format!(
                    "field `{}` is stored as attribute `{}`, where tree nodes keep their bookkeeping; give the field another attribute name with #[serde(rename = \"...\")]",
                    field.name(),
                    field.attr_name
                ),
            );
        }
    }
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
