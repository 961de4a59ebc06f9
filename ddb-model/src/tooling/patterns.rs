//! The access patterns the derives generate for an entity, with the requests each sends (the
//! counts the request report checks, and the README's tables of tree and edge costs).

use super::{EdgeModel, EntityModel, Inverse, literal_prefix, placeholders};
use crate::model::{AttrShape, MultiIndexShape};
use crate::stats::Op;

/// One access pattern: what it finds, the call that runs it, the key condition it sends,
/// where it reads, and the requests it costs.
///
/// A pattern stands for the generated methods its call names (`Order::query(..)`), and for
/// the ones its name lists before a `:` or a `` ` `` (`create, put, replace`). Every access
/// method of an entity's description (`EntityShape::methods`) has one: a method this module does not describe yet gets a row of its own, whose `target`
/// is empty.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccessPattern {
    /// What the pattern does (`get`, `by gsi1: ORG#<org>, USER#<name> prefix`, ...).
    pub name: String,
    /// The generated call (`User::get(&db, id)`).
    pub call: String,
    /// The key condition (or key) it sends; empty for patterns of several requests.
    pub key: String,
    /// `table` or the index it reads.
    pub target: String,
    /// The requests it sends.
    pub requests: String,
}

fn pattern(name: String, call: String, key: String, target: &str, requests: &str) -> AccessPattern {
    AccessPattern { name, call, key, target: target.to_owned(), requests: requests.to_owned() }
}

/// `pk = "USER#<id>", sk = "PROFILE"`, or with `begins_with` for a prefix.
fn key_text(pk: &str, sk: Option<&str>, prefix: bool) -> String {
    match sk {
        None => format!("pk = {pk}"),
        Some(sk) if prefix && sk.is_empty() => format!("pk = {pk}"),
        Some(sk) if prefix => format!("pk = {pk}, sk begins_with {sk}"),
        Some(sk) => format!("pk = {pk}, sk = {sk}"),
    }
}

/// The sort-key template up to and including placeholder `i`.
fn sk_through(sk: &str, i: usize) -> &str {
    let mut seen = 0;
    for (at, c) in sk.char_indices() {
        if c == '>' {
            if seen == i {
                return &sk[..=at];
            }
            seen += 1;
        }
    }
    sk
}

pub(super) fn of_entity(e: &EntityModel, type_attr: Option<&str>) -> Vec<AccessPattern> {
    let s = &e.shape;
    let mut out = Vec::new();
    if s.pk.is_empty() {
        // Implemented by hand: nothing declared to describe.
        return out;
    }
    let name = e.name;
    let key_fields = dedup(
        placeholders(&s.pk)
            .into_iter()
            .chain(s.sk.as_deref().map(placeholders).unwrap_or_default()),
    );
    let args = key_fields.join(", ");
    let comma = if args.is_empty() { "" } else { ", " };
    let key = key_text(&s.pk, s.sk.as_deref(), false);
    // The rows of one item of the table, under its key.
    let mut row = |pattern_name: String, call: String, requests: String| {
        out.push(pattern(pattern_name, call, key.clone(), "table", &requests))
    };
    let call = |op: &str| format!("{name}::{op}(&db{comma}{args})");
    row("get".into(), call("get"), "1 GetItem".into());
    // The writes: with unique constraints, every write keeps the sentinels in a transaction
    // (`ops::unique`), which the runtime decides on the same `Entity::UNIQUES`.
    let (get, put, update, delete, transact) = (
        Op::GetItem.name(),
        Op::PutItem.name(),
        Op::UpdateItem.name(),
        Op::DeleteItem.name(),
        Op::TransactWriteItems.name(),
    );
    let closure = s.tree.as_ref().is_some_and(|t| t.strategy == "closure");
    let pk_args = dedup(placeholders(&s.pk).into_iter()).join(", ");
    let pk_comma = if pk_args.is_empty() { "" } else { ", " };
    let tree_call = format!("{name}::tree(&db{pk_comma}{pk_args})");
    let create = format!("{}.create(&db)", name.to_lowercase());
    if e.uniques.is_empty() {
        row("create, put, replace".into(), create, format!("1 {put}"));
    } else {
        let fields: Vec<&str> = e.uniques.iter().map(|u| u.field).collect();
        let per_value = format!("1 {transact} (the item and a sentinel per unique value)");
        row("create".into(), create, per_value);
        row(
            "put, replace".into(),
            format!("{}.put(&db)", name.to_lowercase()),
            format!(
                "1 consistent {get} + 1 {transact} (the item, the sentinels of changed unique values)"
            ),
        );
        if !closure {
            row(
                format!("update setting a unique field ({})", fields.join("; ")),
                call("update"),
                format!(
                    "1 consistent {get} + 1 {transact} (1 conditioned {update} when no value changes)"
                ),
            );
        }
    }
    if closure {
        // A closure node's fields are copied under its ancestors: a plain update is refused.
        row(
            "update, through the tree (the node and its copies)".into(),
            format!("{tree_call}.update(..)"),
            format!("1 consistent {get} + 1 {transact}"),
        );
    } else {
        let label = if e.uniques.is_empty() { "update" } else { "update of other fields" };
        let cost = format!("1 {update} (2 when `add`/`append` return the result)");
        row(label.into(), call("update"), cost);
    }
    let delete_cost = if e.uniques.is_empty() {
        format!("1 {delete}")
    } else {
        format!(
            "1 consistent {get} + 1 {transact} freeing the sentinels (1 {delete} when the item holds no value)"
        )
    };
    row("delete".into(), call("delete"), delete_cost);
    for v in &s.vectors {
        let Some(index) = e.vector_indexes.iter().find(|d| d.name == v.index) else {
            continue;
        };
        // One search method per vector field, and `nearest` when there is only one.
        let method = format!("nearest_{}", index.name);
        let (methods, call) = if s.vectors.len() == 1 {
            (format!("nearest, {method}"), "nearest")
        } else {
            (method.clone(), method.as_str())
        };
        let key = match (index.by_type, type_attr) {
            (true, Some(attr)) => format!("{attr} = {name}"),
            _ => String::new(),
        };
        let filters: Vec<&str> = index.filters.iter().map(|f| f.name).collect();
        let filters = if filters.is_empty() {
            String::new()
        } else {
            format!("; `filter` on {}", filters.join(", "))
        };
        out.push(pattern(
            format!(
                "{methods}: `{}` ({} dims, {}{filters})",
                v.attr,
                index.dims,
                index.metric.as_str()
            ),
            format!("{name}::{call}(&db, k, &vector)"),
            key,
            index.name,
            &format!("1 {}", Op::SearchVectors.name()),
        ));
    }
    path_patterns(&mut out, name, "", "table", &s.pk, s.sk.as_deref(), "1 Query per page", "");
    for index in &s.indexes {
        let suffix = format!("_{}", index.query.as_deref().unwrap_or(&index.index));
        let label = match &index.when {
            Some(when) => format!("{} (when {when}): ", index.index),
            None => format!("{}: ", index.index),
        };
        let requests = ON_INDEX;
        path_patterns(
            &mut out,
            name,
            &suffix,
            &index.index,
            &index.pk,
            index.sk.as_deref(),
            requests,
            &label,
        );
    }
    for index in &s.multi_indexes {
        multi_patterns(&mut out, name, index);
    }
    if let Some(tree) = &s.tree {
        let target = tree.index.as_deref().unwrap_or("table");
        // The README's table of tree costs, per strategy.
        let costs: [(&str, &str, &str); 5] = match tree.strategy.as_str() {
            "path" => [
                ("descendants", "1 Query", target),
                ("children", "1 Query", target),
                ("ancestors", "1 BatchGetItem", "table"),
                ("insert", "1 transaction", "table"),
                ("move_under", "rewrites the subtree (resumable beyond one transaction)", "table"),
            ],
            "closure" => [
                ("descendants", "1 Query", "table"),
                ("children", "1 Query", "table"),
                ("ancestors", "1 GetItem + 1 BatchGetItem", "table"),
                ("insert", "1 GetItem + 1 transaction (a copy per level)", "table"),
                ("move_under", "rewrites the copies (resumable beyond one transaction)", "table"),
            ],
            "adjacency" => [
                ("descendants", "1 Query per level", target),
                ("children", "1 Query", target),
                ("ancestors", "1 GetItem per level", "table"),
                ("insert", "1 GetItem per ancestor + 1 transaction", "table"),
                (
                    "move_under",
                    "1 transaction, any size (after reads that keep max_depth)",
                    "table",
                ),
            ],
            _ => [
                ("descendants", "1 Query (from a NestedSpan; + 1 GetItem from an id)", target),
                ("children", "1 GetItem + 1 Query of the subtree", target),
                ("ancestors", "1 GetItem + 1 BatchGetItem", "table"),
                ("insert", "1 GetItem + 1 transaction (a rare bounded renumbering)", "table"),
                ("move_under", "rewrites the subtree (resumable beyond one transaction)", "table"),
            ],
        };
        for (op, requests, target) in costs {
            out.push(pattern(
                format!("tree {op} ({})", tree.strategy),
                format!("{tree_call}.{op}(..)"),
                String::new(),
                target,
                requests,
            ));
        }
    }
    // A method no row stands for (a kind this module does not describe yet) still gets one.
    for method in &s.methods {
        if !out.iter().any(|p| stands_for(p, method)) {
            out.push(pattern(
                method.clone(),
                format!("{name}::{method}(&db, ..)"),
                String::new(),
                "",
                "see the method's documentation",
            ));
        }
    }
    out
}

/// The requests of a query on a global secondary index.
const ON_INDEX: &str = "1 Query per page (eventually consistent)";

/// True when `p` stands for the generated method `method` (see [`AccessPattern`]).
fn stands_for(p: &AccessPattern, method: &str) -> bool {
    let listed = p.name.split([':', '`']).next().unwrap_or_default();
    p.call.contains(&format!("::{method}("))
        || p.call.contains(&format!(".{method}("))
        || listed.split(',').any(|m| m.trim() == method)
}

/// Each placeholder once, in order.
fn dedup<'t>(names: impl Iterator<Item = &'t str>) -> Vec<&'t str> {
    let mut out: Vec<&str> = Vec::new();
    for n in names {
        if !out.contains(&n) {
            out.push(n);
        }
    }
    out
}

/// The patterns of one access path (the table's key or an index): its partition, then one
/// level per sort-key placeholder, until one that the partition key or an earlier level
/// binds already (as the derive generates them).
#[allow(clippy::too_many_arguments)]
fn path_patterns(
    out: &mut Vec<AccessPattern>,
    name: &str,
    suffix: &str,
    target: &str,
    pk: &str,
    sk: Option<&str>,
    requests: &str,
    label: &str,
) {
    let pk_fields = dedup(placeholders(pk).into_iter());
    let pk_args = pk_fields.join(", ");
    let comma = if pk_args.is_empty() { "" } else { ", " };
    // `partition`: every item of the partition, whatever its sort key.
    let partition_key = key_text(pk, None, false);
    out.push(pattern(
        format!("{label}partition `{pk}`"),
        format!("{name}::partition{suffix}(&db{comma}{pk_args})"),
        partition_key.clone(),
        target,
        requests,
    ));
    // `query` without levels: the sort keys starting with the template's literal prefix (the
    // one item of a literal sort key). Listed unless a level row shows it with that key.
    let sk_fields = sk.map(placeholders).unwrap_or_default();
    let exact = sk.is_some() && sk_fields.is_empty();
    let query_key = key_text(pk, sk.map(literal_prefix), !exact);
    if sk_fields.first().is_none_or(|f| pk_fields.contains(f)) || query_key != partition_key {
        out.push(pattern(
            format!("{label}{name} items of `{pk}`"),
            format!("{name}::query{suffix}(&db{comma}{pk_args})"),
            query_key,
            target,
            if exact && target == "table" { "1 Query" } else { requests },
        ));
    }
    let Some(sk) = sk else { return };
    let mut bound = pk_fields.clone();
    let mut levels = String::new();
    for (i, field) in sk_fields.iter().enumerate() {
        if bound.contains(field) {
            break;
        }
        bound.push(field);
        levels.push_str(&format!(".{field}(..)"));
        let last = i + 1 == sk_fields.len();
        out.push(pattern(
            format!("{label}by {}", bound[pk_fields.len()..].join(", ")),
            format!("{name}::query{suffix}(&db{comma}{pk_args}){levels}"),
            key_text(pk, Some(sk_through(sk, i)), !last),
            target,
            if last && target == "table" { "1 Query" } else { requests },
        ));
    }
}

/// The patterns of a multi-attribute index: its partition, then one level per sort attribute
/// (as the derive generates them; without sort attributes, the query is the partition's).
fn multi_patterns(out: &mut Vec<AccessPattern>, name: &str, index: &MultiIndexShape) {
    let path = index.query.as_deref().unwrap_or(&index.index);
    let label = format!("{}: ", index.index);
    let fields =
        |attrs: &[AttrShape]| -> Vec<String> { attrs.iter().map(|a| a.field.clone()).collect() };
    let cond = |attrs: &[AttrShape]| -> String {
        let parts: Vec<String> =
            attrs.iter().map(|a| format!("{} = <{}>", a.attr, a.field)).collect();
        parts.join(", ")
    };
    let args = fields(&index.pk).join(", ");
    let pk_key = cond(&index.pk);
    let attrs: Vec<&str> = index.pk.iter().map(|a| a.attr.as_str()).collect();
    let attrs = attrs.join(", ");
    out.push(pattern(
        format!("{label}partition `{attrs}`"),
        format!("{name}::partition_{path}(&db, {args})"),
        pk_key.clone(),
        &index.index,
        ON_INDEX,
    ));
    if index.sk.is_empty() {
        out.push(pattern(
            format!("{label}{name} items of `{attrs}`"),
            format!("{name}::query_{path}(&db, {args})"),
            pk_key.clone(),
            &index.index,
            ON_INDEX,
        ));
    }
    let mut levels = String::new();
    for (i, attr) in index.sk.iter().enumerate() {
        let fixed = index.sk.get(..=i).unwrap_or_default();
        levels.push_str(&format!(".{}(..)", attr.field));
        out.push(pattern(
            format!("{label}by {}", fields(fixed).join(", ")),
            format!("{name}::query_{path}(&db, {args}){levels}"),
            format!("{pk_key}, {}", cond(fixed)),
            &index.index,
            ON_INDEX,
        ));
    }
}

pub(super) fn of_edge(name: &str, edge: &EdgeModel) -> Vec<AccessPattern> {
    let incoming = match &edge.inverse {
        Inverse::Items { name: inverse, .. } => {
            Some(("table", format!("1 Query per page (`{inverse}` items)")))
        }
        Inverse::Index { index, .. } => Some((*index, ON_INDEX.to_owned())),
        Inverse::Symmetric => Some(("table", "1 Query per page".to_owned())),
        Inverse::None => None,
    };
    let rows = [
        ("link (idempotent)", "link(&edge)", "table", "1 request".to_owned()),
        ("unlink (idempotent)", "unlink(from, to)", "table", "1 request".to_owned()),
        ("get, exists", "get(from, to)", "table", "1 request".to_owned()),
        ("outgoing", "outgoing(from)", "table", "1 Query per page".to_owned()),
    ];
    let incoming =
        incoming.map(|(target, requests)| ("incoming", "incoming(to)", target, requests));
    rows.into_iter()
        .chain(incoming)
        .map(|(pattern_name, op, target, requests)| {
            let call = format!("{name}::edges(&db).{op}");
            pattern(pattern_name.into(), call, String::new(), target, &requests)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::EntityShape;

    /// A generated method no row stands for still gets one, with no table or index.
    #[test]
    fn undescribed_methods_get_a_row() {
        let shape = EntityShape::parse("2:pk9:USER#<id>2:sk0:7:methods18:get delete archive");
        let model = EntityModel {
            name: "User",
            shape: shape.expect("a shape"),
            version: None,
            constants: &[],
            edge: None,
            uniques: &[],
            ttl: None,
            schema: None,
            vector_indexes: Vec::new(),
            patterns: Vec::new(),
        };
        let rows = of_entity(&model, None);
        let extra: Vec<&str> =
            rows.iter().filter(|p| p.target.is_empty()).map(|p| p.call.as_str()).collect();
        assert_eq!(extra, ["User::archive(&db, ..)"]);
        assert!(
            rows.iter().any(|p| stands_for(p, "get"))
                && rows.iter().any(|p| stands_for(p, "delete"))
        );
    }
}
