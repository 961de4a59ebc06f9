//! The rules of `#[hierarchy]`: the keys each strategy needs, and the shape of the node's key.

use super::{TREE_KIDS_ATTR, TREE_NESTED_ATTRS, TREE_REV_ATTR, TREE_UP_ATTR};
use crate::ast::{Entity, Hierarchy, Strategy};
use crate::ctxt::Ctxt;
use crate::template::Segment;

const PATH_EXAMPLE: &str = "#[hierarchy(path = path, index = gsi1)]";

/// The keys of `#[hierarchy(..)]` the strategy needs and those it has no use for.
pub fn keys(cx: &mut Ctxt, entity: &Entity) {
    let Some(h) = &entity.hierarchy else {
        return;
    };
    match h.strategy {
        Strategy::Path => path_keys(cx, h),
        _ => id_keys(cx, h),
    }
    max_depth(cx, h);
}

fn path_keys(cx: &mut Ctxt, h: &Hierarchy) {
    if !h.path.given {
        cx.error_at(
            h.span,
            format!("#[hierarchy] needs the field holding each node's path, as in {PATH_EXAMPLE}"),
        );
    }
    if !h.index.given {
        cx.error_at(
            h.span,
            format!(
                "#[hierarchy] needs an index with a sort key for children and depth queries, as in {PATH_EXAMPLE}"
            ),
        );
    }
    if let Some(parent) = &h.parent.value {
        cx.error_spanned_by(
            parent,
            "`parent` is for the closure and adjacency strategies, whose nodes are addressed by id; the path strategy reads the parent from the path. Add `strategy = closure` (or `adjacency`), or remove `parent`",
        );
    }
}

fn id_keys(cx: &mut Ctxt, h: &Hierarchy) {
    let name = h.strategy.name();
    let example = match h.strategy {
        Strategy::Adjacency => "#[hierarchy(strategy = adjacency, parent = parent, index = gsi1)]",
        Strategy::NestedSet => "#[hierarchy(strategy = nested_set, parent = parent, index = gsi1)]",
        _ => "#[hierarchy(strategy = closure, parent = parent)]",
    };
    if !h.parent.given {
        cx.error_at(
            h.span,
            format!(
                "a {name} tree needs the field naming each node's parent (an `Option` of the id type), as in {example}"
            ),
        );
    }
    if let Some(path) = &h.path.value {
        cx.error_spanned_by(
            path,
            format!(
                "`path` is for the path strategy; {name} nodes are addressed by the id in their sort key and name their `parent`, as in {example}"
            ),
        );
    }
    match (h.strategy, &h.index.value) {
        (Strategy::Adjacency, None) if !h.index.given => cx.error_at(
            h.span,
            format!(
                "an adjacency tree needs an index with a sort key to find the children of a node, as in {example}"
            ),
        ),
        (Strategy::NestedSet, None) if !h.index.given => cx.error_at(
            h.span,
            format!(
                "a nested_set tree needs an index with a sort key, where each node's interval start orders the subtree range queries, as in {example}"
            ),
        ),
        _ => {}
    }
}

fn max_depth(cx: &mut Ctxt, h: &Hierarchy) {
    let Some(lit) = &h.max_depth else {
        return;
    };
    let limit = h.strategy.depth_limit();
    if lit.base10_parse::<usize>().is_ok_and(|n| (1..=limit).contains(&n)) {
        return;
    }
    let message = match h.strategy {
        Strategy::Path => format!("`max_depth` must be between 1 and {limit}"),
        Strategy::NestedSet => format!(
            "`max_depth` must be between 1 and {limit} for the nested_set strategy, so that a node's ancestors are one BatchGetItem"
        ),
        _ => format!(
            "`max_depth` must be between 1 and {limit} for the {} strategy, so that an insert or a move fits one transaction",
            h.strategy.name()
        ),
    };
    cx.error_spanned_by(lit, message);
}

/// The node's key and fields agree with the strategy.
pub fn check(cx: &mut Ctxt, entity: &Entity) {
    let Some(h) = &entity.hierarchy else {
        return;
    };
    match h.strategy {
        Strategy::Path => {
            path_key(cx, entity, h);
            index_conflict(cx, entity, h);
            reserved_attrs(cx, entity, &[TREE_REV_ATTR], "their revision");
        }
        _ => {
            id_key(cx, entity, h);
            parent_field(cx, entity, h);
            index_conflict(cx, entity, h);
            let mut reserved = vec![TREE_REV_ATTR, TREE_UP_ATTR, TREE_KIDS_ATTR];
            if h.strategy == Strategy::NestedSet {
                reserved.extend(TREE_NESTED_ATTRS);
            }
            reserved_attrs(cx, entity, &reserved, "their bookkeeping");
        }
    }
}

/// Path strategy: the sort key is literal text and the path; the path is in no partition key.
fn path_key(cx: &mut Ctxt, entity: &Entity, h: &Hierarchy) {
    let path_name = h.path_field.and_then(|i| entity.fields.get(i)).map(|f| f.name());
    match (&entity.sk, &path_name) {
        (None, _) => cx.error_at(
            h.span,
            format!(
                "a tree keeps each node's path in the sort key: give `{}` an `sk` template ending with the path field, as in #[entity(sk = \"NODE#<{}>\")]",
                entity.ident,
                path_name.as_deref().unwrap_or("path")
            ),
        ),
        (Some(sk), Some(name)) => {
            let fields: Vec<&str> = sk.fields().map(|(n, _)| n).collect();
            let ends_with_path = matches!(
                sk.segments.last(),
                Some(Segment::Field { name: last, .. }) if last == name
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
        (Some(_), None) => {}
    }
    if let Some(name) = &path_name {
        not_in_partition_key(cx, entity, name, "node path");
    }
}

/// `what` `name` is no placeholder of the partition key.
fn not_in_partition_key(cx: &mut Ctxt, entity: &Entity, name: &str, what: &str) {
    for (placeholder, span) in entity.pk.fields() {
        if placeholder == name {
            cx.error_at(
                span,
                format!(
                    "the {what} `{name}` cannot be part of the partition key: the partition key names the tree (one tree per partition), the sort key the node"
                ),
            );
        }
    }
}

/// Closure and adjacency: the sort key is literal text and the node's id, which is neither
/// the parent nor in the partition key.
fn id_key(cx: &mut Ctxt, entity: &Entity, h: &Hierarchy) {
    let name = h.strategy.name();
    let Some(sk) = &entity.sk else {
        cx.error_at(
            h.span,
            format!(
                "a {name} tree keeps each node's id in the sort key: give `{}` an `sk` template made of literal text and the id field, as in #[entity(sk = \"NODE#<id>\")]",
                entity.ident
            ),
        );
        return;
    };
    let fields: Vec<&str> = sk.fields().map(|(n, _)| n).collect();
    let id = match (sk.segments.last(), fields.as_slice()) {
        (Some(Segment::Field { name: last, .. }), [only]) if last == only => *only,
        _ => {
            cx.error_at(
                entity.span_of_sk(),
                format!(
                    "the sort key of a {name} node must be literal text followed by the node's id field and nothing else, as in sk = \"NODE#<id>\": the id addresses the node and its copies"
                ),
            );
            return;
        }
    };
    let parent = h.parent_field.and_then(|i| entity.fields.get(i));
    if let (Some(parent), Some(ident)) = (parent, &h.parent.value)
        && parent.name() == id
    {
        cx.error_spanned_by(
            ident,
            format!(
                "the parent field cannot be the node's id `{id}`: name a separate field `parent: Option<..>` holding the parent's id"
            ),
        );
    }
    not_in_partition_key(cx, entity, id, "node id");
}

/// The parent field is stored, and in no key template other than as the node's id.
fn parent_field(cx: &mut Ctxt, entity: &Entity, h: &Hierarchy) {
    let (Some(field), Some(ident)) =
        (h.parent_field.and_then(|i| entity.fields.get(i)), &h.parent.value)
    else {
        return;
    };
    let parent = field.name();
    let in_key = entity.templates().any(|t| t.fields().any(|(n, _)| n == parent));
    if in_key && entity.sk.as_ref().is_none_or(|sk| !sk.fields().any(|(n, _)| n == parent)) {
        cx.error_spanned_by(
            ident,
            format!(
                "the parent field `{parent}` fills a placeholder of a key template: a move changes the parent, so the key would change with it; key the node on other fields"
            ),
        );
    }
    if field.skip_attr.is_some() || field.flatten {
        cx.error_spanned_by(
            ident,
            format!(
                "the parent field `{parent}` must be stored and read back with the node; remove its serde skip or flatten attribute"
            ),
        );
    }
}

/// The index of the tree has no `#[index]` key of its own.
fn index_conflict(cx: &mut Ctxt, entity: &Entity, h: &Hierarchy) {
    if let Some(index) = h.tree_index()
        && entity.indexes.iter().any(|i| i.name == *index)
    {
        cx.error_spanned_by(
            index,
            format!(
                "index `{index}` is also given an #[index({index})] key: the tree writes its own keys to the index it uses for children; use another index for one of them"
            ),
        );
    }
}

/// No field is stored where the tree keeps its bookkeeping.
fn reserved_attrs(cx: &mut Ctxt, entity: &Entity, reserved: &[&str], what: &str) {
    for field in entity.fields.iter().filter(|f| f.is_stored()) {
        if reserved.contains(&field.attr_name.as_str()) {
            cx.error_spanned_by(
                field.ident,
                format!(
                    "field `{}` is stored as attribute `{}`, where tree nodes keep {what}; give the field another attribute name with #[serde(rename = \"...\")]",
                    field.name(),
                    field.attr_name
                ),
            );
        }
    }
}
