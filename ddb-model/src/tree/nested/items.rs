//! The items and actions nested-set writes send: node puts with their interval, rewrites,
//! counter bumps, guarded deletes, and the slots a move or a delete takes.

use aws_sdk_dynamodb::types::TransactWriteItem;

use super::layout::{self, Place};
use super::write::{TOP_SHARE, Top};
use super::*;
use crate::expr::ExprBuilder;
use crate::item::item_size;
use crate::model::{Table, to_item};
use crate::ops::action::Action;
use crate::tree::node::reparented;
use crate::tree::raw::{
    RawAction, changed_fields, equals, guard, guarded, is_node, n, s, update_expression,
};

/// The slot of a top-level node: a small share of the top level's free numbers.
pub(super) fn top_slot(next: u64) -> Option<(u64, u64)> {
    let room = layout::TOP.1.checked_sub(next)?.checked_sub(1)?;
    if room < 2 {
        return None;
    }
    let width = (room / TOP_SHARE).max(2);
    Some((next + 1, next + width))
}

/// The interval a moved subtree of `size` nodes takes in a gap `(next, rgt)`: its need,
/// doubled for room, or the share a new child would take if that is more; `None` when the
/// gap is too small.
pub(super) fn move_slot((next, rgt): (u64, u64), size: usize, top: bool) -> Option<(u64, u64)> {
    let room = u128::from(rgt.checked_sub(next)?.checked_sub(1)?);
    let need = layout::need(size as u64);
    if room < need {
        return None;
    }
    let share = room / if top { u128::from(TOP_SHARE) } else { 8 };
    let width = (need * 2).max(share).min(room);
    let hi = u64::try_from(u128::from(next) + width).ok()?;
    Some((next + 1, hi))
}

/// True when a node is already where `place` puts it.
pub(super) fn in_place<E>(raw: &Raw<E>, place: &Place) -> bool {
    raw.lft == place.lft
        && raw.rgt == place.rgt
        && raw.next == place.next
        && raw.depth == place.depth
        && raw.chain == place.chain
}

/// The bookkeeping and tree index keys of a node at `place`.
pub(super) fn place_attrs<E: IdHierarchy>(place: &Place) -> Vec<(&'static str, AttributeValue)> {
    let mut out = vec![
        (TREE_LFT_ATTR, n(place.lft)),
        (TREE_RGT_ATTR, n(place.rgt)),
        (TREE_NEXT_ATTR, n(place.next)),
        (TREE_DEPTH_ATTR, n(place.depth as u64)),
        (TREE_UP_ATTR, s(&crate::tree::node::encode_chain(&place.chain))),
    ];
    if let Some(sk) = index::<E>().and_then(|i| i.sk) {
        out.push((sk, s(&index_sk::<E>(place.lft))));
    }
    out
}

pub(super) fn add_place<E: IdHierarchy>(item: &mut Item, place: &Place) {
    for (attr, value) in place_attrs::<E>(place) {
        item.insert(attr.to_owned(), value);
    }
}

/// The item of a new node at `place` with `kids` children (an insert: none; a bulk load: its
/// children in the load), made from its entity item `base`.
pub(super) fn new_node_item<E: IdHierarchy>(base: &Item, place: &Place, kids: u64) -> Item {
    let mut item = base.clone();
    add_place::<E>(&mut item, place);
    if let Some(index) = index::<E>()
        && index.pk != <E::Table as Table>::PK
        && let Some(pk) = item.get(<E::Table as Table>::PK).cloned()
    {
        item.insert(index.pk.to_owned(), pk);
    }
    item.insert(TREE_REV_ATTR.to_owned(), n(0));
    item.insert(TREE_KIDS_ATTR.to_owned(), n(kids));
    item
}

/// The put of a new node at `place` (the item must not exist).
pub(super) fn node_put<E: IdHierarchy>(
    table: &str,
    base: &Item,
    place: &Place,
) -> Result<(TransactWriteItem, usize), Error> {
    let item = new_node_item::<E>(base, place, 0);
    let mut x = ExprBuilder::default();
    let pk = x.name(<E::Table as Table>::PK);
    let action = Action::put(item).guarded(format!("attribute_not_exists({pk})"), x);
    let size = action.size();
    Ok((action.return_old(true).into_transact_item(table)?, size))
}

/// `is a node AND revision, interval as read`.
pub(super) fn as_read<E: IdHierarchy>(x: &mut ExprBuilder, raw: &Raw<E>) -> String {
    let mut cond = guard::<E>(x, raw.rev, None);
    for (attr, v) in [(TREE_LFT_ATTR, raw.lft), (TREE_RGT_ATTR, raw.rgt)] {
        cond.push_str(&format!(" AND {}", equals(x, attr, n(v), false)));
    }
    cond
}

/// The entity attributes a move changes on its node (the parent field): old and new item.
pub(super) fn parent_change<E: IdHierarchy>(
    raw: &Raw<E>,
    parent: Option<&str>,
) -> Result<(Item, Item), Error> {
    let node = reparented(&raw.node, parent)?;
    Ok((to_item(&raw.node, raw.node.version())?, to_item(&node, node.version())?))
}

/// Rewrites a node into `place`: its interval, mark, depth, ancestors and index key; with
/// `fields` (a move's node), the entity attributes that differ, and the version goes up.
/// `checked`: only if the node is as read.
pub(super) fn rewrite<E: IdHierarchy>(
    table: &str,
    pk: &str,
    raw: &Raw<E>,
    place: &Place,
    fields: Option<&(Item, Item)>,
    checked: bool,
) -> Result<RawAction, Error> {
    let mut x = ExprBuilder::default();
    let cond = if checked { as_read::<E>(&mut x, raw) } else { is_node::<E>(&mut x) };
    let mut size = 64;
    let mut sets = Vec::new();
    for (attr, value) in place_attrs::<E>(place) {
        size += item_size(&Item::from([(attr.to_owned(), value.clone())]));
        sets.push(equals(&mut x, attr, value, false));
    }
    let (mut removes, mut adds) = (Vec::new(), Vec::new());
    if let Some((old, new)) = fields {
        let (changed, removed, bytes) =
            changed_fields::<E>(&mut x, old, new, NESTED_BOOKKEEPING_ATTRS);
        (size, removes) = (size + bytes, removed);
        sets.extend(changed);
        if let Some(def) = E::VERSION {
            let (name, one) = (x.name(def.attr), x.value(n(1)));
            adds.push(format!("{name} {one}"));
        }
    }
    let update = |key| Action::update(key, update_expression(&sets, &removes, &adds));
    guarded::<E>(table, (pk, node_sk::<E>(&raw.id)), update, cond, x, size)
}

/// Counts `kids` more children on the node `p` as read (its revision goes up), and with
/// `next`, moves its high-water mark there (the mark must still be the one read).
pub(super) fn bump<E: IdHierarchy>(
    table: &str,
    pk: &str,
    p: &Raw<E>,
    next: Option<u64>,
    kids: i64,
) -> Result<RawAction, Error> {
    let mut x = ExprBuilder::default();
    let mut cond = as_read::<E>(&mut x, p);
    // A node without children may have no mark yet.
    cond.push_str(&format!(" AND {}", equals(&mut x, TREE_NEXT_ATTR, n(p.next), p.next == p.lft)));
    let mark = x.name(TREE_NEXT_ATTR);
    let rev = x.name(TREE_REV_ATTR);
    let one = x.value(n(1));
    let mut update = String::new();
    if let Some(next) = next {
        let v = x.value(n(next));
        update.push_str(&format!("SET {mark} = {v} "));
    }
    let mut adds = vec![format!("{rev} {one}")];
    if kids != 0 {
        let name = x.name(TREE_KIDS_ATTR);
        let v = x.value(AttributeValue::N(kids.to_string()));
        adds.push(format!("{name} {v}"));
    }
    update.push_str(&format!("ADD {}", adds.join(", ")));
    let update = |key| Action::update(key, update);
    guarded::<E>(table, (pk, node_sk::<E>(&p.id)), update, cond, x, 48)
}

/// Updates the record of the top level: with `next`, its high-water mark (the mark must
/// still be the one read, or the record missing if it was); adds `kids` to its counter.
pub(super) fn top_update<E: IdHierarchy>(
    table: &str,
    pk: &str,
    top: &Top,
    next: Option<u64>,
    kids: i64,
) -> Result<RawAction, Error> {
    let mut x = ExprBuilder::default();
    let cond = match (next, top.exists) {
        (Some(_), false) => {
            let pk_name = x.name(<E::Table as Table>::PK);
            format!("attribute_not_exists({pk_name})")
        }
        (Some(_), true) => equals(&mut x, TREE_NEXT_ATTR, n(top.next), false),
        (None, _) => {
            let pk_name = x.name(<E::Table as Table>::PK);
            format!("attribute_exists({pk_name})")
        }
    };
    let type_name = x.name(crate::model::type_attr::<E::Table>());
    let type_value = x.value(s(&format!("{}:tree-top", E::NAME)));
    let mut update = format!("SET {type_name} = {type_value}");
    if let Some(next) = next {
        update.push_str(&format!(", {}", equals(&mut x, TREE_NEXT_ATTR, n(next), false)));
    }
    if kids != 0 {
        let (name, v) = (x.name(TREE_KIDS_ATTR), x.value(n(kids)));
        update.push_str(&format!(" ADD {name} {v}"));
    }
    let update = |key| Action::update(key, update);
    guarded::<E>(table, (pk, top_sk::<E>()), update, cond, x, 64)
}

/// Deletes a node of a delete's subtree if it is still as read: same revision (nothing
/// inserted under it), same interval (not moved or renumbered), and `kids` children left.
pub(super) fn node_delete<E: IdHierarchy>(
    table: &str,
    pk: &str,
    raw: &Raw<E>,
    kids: u64,
) -> Result<RawAction, Error> {
    let mut x = ExprBuilder::default();
    let mut cond = as_read::<E>(&mut x, raw);
    if let (Some(def), Some(v)) = (E::VERSION, raw.node.version()) {
        cond.push_str(&format!(" AND {}", equals(&mut x, def.attr, n(v), v == 0)));
    }
    cond.push_str(&format!(" AND {}", equals(&mut x, TREE_KIDS_ATTR, n(kids), false)));
    guarded::<E>(table, (pk, node_sk::<E>(&raw.id)), Action::delete, cond, x, 0)
}
