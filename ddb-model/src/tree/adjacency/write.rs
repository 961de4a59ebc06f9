//! Adjacency writes: insert, move and delete (chunked, resumable under an intent record),
//! and the conditions that keep the parent references and children counters exact.

use super::*;
use crate::tree::node::{changed, cycle, no_node, no_sort_key, reparented, same_key, within_depth};
use crate::tree::raw::{RawAction, changed_fields, guarded, n, update_expression};

impl<'a, E: IdHierarchy> AdjacencyTree<'a, E> {
    /// The node `start` (escaped) and its ancestors, up to the top, each read strongly
    /// consistently: the ancestry of a node `node` (escaped) to insert or move under `start`,
    /// whose depth is then the length of the walk plus one. Refused: a missing `start`
    /// ([`TreeProblem::NoParent`]), a node deeper than `max_depth`
    /// ([`TreeProblem::TooDeep`]), and for a move (`moving`, the node itself) a walk that
    /// meets the node ([`TreeProblem::Cycle`]). A node met twice means the reads saw the
    /// tree before and after a move of the ancestors: [`Try::Again`].
    pub(super) async fn walk_up(
        &self,
        start: &str,
        node: &str,
        moving: Option<&str>,
    ) -> Result<Try<Vec<Raw<E>>>, Error> {
        let mut walk: Vec<Raw<E>> = Vec::new();
        let mut next = Some(start.to_owned());
        while let Some(a) = next {
            if walk.iter().any(|r| id_of(&r.node) == a) {
                return Ok(Try::Again(changed::<E>(node)));
            }
            if moving == Some(a.as_str()) {
                return Err(cycle::<E>(node, start));
            }
            let Some(raw) = self.raw(&a).await? else {
                if walk.is_empty() {
                    return Err(problem::<E>(TreeProblem::NoParent { parent: display(&a) }));
                }
                // An ancestor deleted meanwhile: the transaction's check of its child fails.
                break;
            };
            next = parent_of(&raw.node);
            walk.push(raw);
            // The node would be at depth `walk.len() + 1` at least.
            within_depth::<E>(node, walk.len() + 1)?;
        }
        Ok(Try::Done(walk))
    }
}

impl<'a, E: IdHierarchy> AdjacencyTree<'a, E> {
    /// Whether the subtree of `x` (read as `x_raw`) fits under `max_depth` once `x` is at
    /// depth `depth` (`walked`: the new parent and its ancestors; `used`: the actions the
    /// move's transaction has without these checks), and the conditions that make the answer
    /// hold when the transaction commits:
    ///
    /// - a leaf fits (the depth of `x` itself was checked by the walk); the move's condition
    ///   on the revision of `x` fails if a child is inserted (or moved) under it meanwhile;
    /// - a move that does not make `x` deeper keeps every node within the limit: the old
    ///   parent's ancestors are read (one `GetItem` each) and the transaction checks that
    ///   none of them moved, so the old depth is still the one compared;
    /// - otherwise the subtree is read, level by level, down to the depth the limit leaves
    ///   ([`TreeProblem::TooDeep`] for a node below it), and the transaction checks the
    ///   revision of every node read, deepest first (an insert or a move under one of them
    ///   meanwhile cancels it), as many as fit the transaction's 100 actions.
    async fn subtree_fits(
        &self,
        x_raw: &Raw<E>,
        walked: &[String],
        depth: usize,
        used: usize,
    ) -> Result<Try<Fits>, Error> {
        let table = self.db.table_name();
        let x = id_of(&x_raw.node);
        let mut fits = Fits { old_parent: None, checks: Vec::new() };
        if x_raw.kids == 0 {
            return Ok(Try::Done(fits));
        }
        let changed = || changed::<E>(&x);
        let room = 100usize.saturating_sub(used);
        let sk_attr = index::<E>().and_then(|i| i.sk);
        // The old depth: the old parent and its ancestors.
        let old = match parent_of(&x_raw.node) {
            Some(op) => match self.walk_up(&op, &x, Some(&x)).await {
                Ok(Try::Done(old)) => old,
                // The old parent is gone or its branch is being moved: read again.
                Ok(Try::Again(_)) => return Ok(Try::Again(changed())),
                Err(e) if e.is_parent_missing() || e.is_tree_too_deep() || e.is_tree_cycle() => {
                    return Ok(Try::Again(changed()));
                }
                Err(e) => return Err(e),
            },
            None => Vec::new(),
        };
        let unchecked: Vec<&Raw<E>> =
            old.iter().skip(1).filter(|a| !walked.contains(&id_of(&a.node))).collect();
        if let Some(sk_attr) = sk_attr.filter(|_| depth <= old.len() + 1 && unchecked.len() <= room)
        {
            fits.old_parent = old.first().and_then(|p| p.index_sk.clone());
            for a in unchecked {
                let a_id = id_of(&a.node);
                let stored = (sk_attr, a.index_sk.as_deref());
                fits.checks.push(same_parent::<E>(table, &self.pk, &a_id, stored)?);
            }
            return Ok(Try::Done(fits));
        }
        // Deeper than before: the subtree's height decides.
        let below = E::TREE.max_depth.saturating_sub(depth);
        let Some(levels) = self.read_levels(&x, below.saturating_add(1)).await? else {
            return Err(no_node::<E>(&x));
        };
        if let Some(deep) = levels.get(below + 1).and_then(|level| level.first()) {
            within_depth::<E>(&id_of(&deep.node), depth + below + 1)?;
        }
        let below_x = || levels.iter().skip(1).flatten();
        if below_x().any(|r| walked.contains(&id_of(&r.node))) {
            // The reads saw the destination both above and below the node: it moved.
            return Ok(Try::Again(changed()));
        }
        for raw in levels.iter().skip(1).rev().flatten().take(room) {
            let mut x = ExprBuilder::default();
            let cond = guard::<E>(&mut x, raw.rev, None);
            let key = (self.pk.as_str(), node_sk::<E>(&id_of(&raw.node)));
            fits.checks.push(guarded::<E>(table, key, Action::check, cond, x, 0)?);
        }
        Ok(Try::Done(fits))
    }

    pub(super) async fn move_node(&self, x: &str, p: Option<&str>) -> Result<OpReport, Error> {
        if p == Some(x) {
            return Err(cycle::<E>(x, x));
        }
        let table = self.db.table_name();
        let sk_attr = index::<E>().and_then(|i| i.sk).ok_or_else(no_sort_key::<E>)?;
        let tree = self;
        moving(E::NAME, MOVE_CONFLICTS, display(x), move |_| async move {
            let changed = || changed::<E>(x);
            let Some(x_raw) = tree.raw(x).await? else {
                return Err(no_node::<E>(x));
            };
            // The new parent and its ancestors, up to the top.
            let walk = match p {
                Some(p) => match tree.walk_up(p, x, Some(x)).await? {
                    Try::Done(walk) => walk,
                    Try::Again(_) => return Ok(Try::Again(changed())),
                },
                None => Vec::new(),
            };
            let old_parent = parent_of(&x_raw.node);
            if old_parent.as_deref() == p {
                return Ok(Try::Done(OpReport { nodes: 0, resumable: false }));
            }
            // The subtree must fit under `max_depth` at its new depth; what that was decided
            // on is checked by the transaction (see `subtree_fits`).
            let walked: Vec<String> = walk.iter().map(|a| id_of(&a.node)).collect();
            let used = 2 + usize::from(old_parent.is_some()) + walk.len();
            let fits = match tree.subtree_fits(&x_raw, &walked, walk.len() + 1, used).await? {
                Try::Done(fits) => fits,
                Try::Again(err) => return Ok(Try::Again(err)),
            };
            let node = reparented(&x_raw.node, p)?;
            let old_item = to_item(&x_raw.node, x_raw.node.version())?;
            let new_item = to_item(&node, node.version())?;
            let stored = (sk_attr, x_raw.index_sk.as_deref());
            let update = move_update::<E>(table, &old_item, new_item, x_raw.rev, stored)?;
            let mut tx = tree.push(tree.db.transaction(), update);
            if let Some(op) = old_parent.as_ref().filter(|op| !walked.contains(op)) {
                let stored = fits.old_parent.as_deref().map(|v| (sk_attr, Some(v)));
                tx = tree.push(tx, counter::<E>(table, &tree.pk, op, -1, 0, stored)?);
            }
            for check in fits.checks {
                tx = tree.push(tx, check);
            }
            for (i, (a, a_id)) in walk.iter().zip(&walked).enumerate() {
                let stored = (sk_attr, a.index_sk.as_deref());
                // The new parent gains a child; the old one, if it is an ancestor of the
                // new one, loses one; the others are only checked.
                let kids = i64::from(i == 0) - i64::from(old_parent.as_ref() == Some(a_id));
                let rev = u64::from(i == 0);
                tx = tree.push(
                    tx,
                    if kids == 0 && rev == 0 {
                        same_parent::<E>(table, &tree.pk, a_id, stored)?
                    } else {
                        counter::<E>(table, &tree.pk, a_id, kids, rev, Some(stored))?
                    },
                );
            }
            let Some(f) = tree.send_checked(tx, None).await? else {
                return Ok(Try::Done(OpReport { nodes: 1, resumable: false }));
            };
            if !f.refused {
                f.changed()?;
            }
            Ok(Try::Again(changed()))
        })
        .await
    }
}

/// What a move checks so that its subtree still fits under `max_depth` when it commits (see
/// `AdjacencyTree::subtree_fits`).
struct Fits {
    /// The index sort key the old parent was read with (its counter checks it), when the
    /// old branch was read.
    old_parent: Option<String>,
    /// Conditions on other nodes.
    checks: Vec<RawAction>,
}

/// Checks that node `id` still has the parent it was read with (its index key).
pub(super) fn same_parent<E: IdHierarchy>(
    table: &str,
    pk: &str,
    id: &str,
    (attr, value): (&str, Option<&str>),
) -> Result<RawAction, Error> {
    let mut x = ExprBuilder::default();
    let cond = format!("{}{}", is_node::<E>(&mut x), same_key(&mut x, attr, value));
    let check = |key| Action::check(key).return_old(true);
    guarded::<E>(table, (pk, node_sk::<E>(id)), check, cond, x, 0)
}

/// Moves a node whose revision is still `rev` and whose parent is still the one read (its
/// index key, `stored`: the revision restarts when a node is deleted and inserted again, so
/// alone it does not tell the node read from a new one under another parent, which the
/// move would not count down there): sets only the attributes the new parent changes
/// (`new` against `old`: the parent field and the index keys), adds 1 to the revision and to
/// the version, and leaves everything else as stored: the children counter (a child moving
/// out meanwhile counts down on it) and the node's own fields (a concurrent `update` of them
/// stays).
fn move_update<E: IdHierarchy>(
    table: &str,
    old: &Item,
    new: Item,
    rev: u64,
    (attr, value): (&str, Option<&str>),
) -> Result<RawAction, Error> {
    let mut x = ExprBuilder::default();
    let mut cond = guard::<E>(&mut x, rev, None);
    cond.push_str(&same_key(&mut x, attr, value));
    let rev_name = x.name(TREE_REV_ATTR);
    let one = x.value(n(1));
    let mut adds = vec![format!("{rev_name} {one}")];
    if let Some(def) = E::VERSION {
        let name = x.name(def.attr);
        adds.push(format!("{name} {one}"));
    }
    let (sets, removes, size) =
        changed_fields::<E>(&mut x, old, &new, &[TREE_REV_ATTR, TREE_KIDS_ATTR]);
    let update = update_expression(&sets, &removes, &adds);
    let (table_pk, table_sk) = (<E::Table as crate::Table>::PK, <E::Table as crate::Table>::SK);
    let key: Item = [Some(table_pk), table_sk]
        .into_iter()
        .flatten()
        .filter_map(|attr| new.get(attr).map(|v| (attr.to_owned(), v.clone())))
        .collect();
    let size = size + 16 + item_size(&key);
    let sk = table_sk.and_then(|attr| string_attr(&key, attr)).unwrap_or_default().to_owned();
    let item = Action::update(key, update).guarded(cond, x).into_transact_item(table)?;
    Ok(RawAction { sk, item, size })
}
