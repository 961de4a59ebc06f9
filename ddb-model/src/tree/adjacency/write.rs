//! Adjacency writes: insert, move and delete (chunked, resumable under an intent record),
//! and the conditions that keep the parent references and children counters exact.

use super::*;
use crate::tree::builders::Move;
use crate::tree::handle::Adjacency;

impl<'a, E: IdHierarchy> AdjacencyTree<'a, E> {
    fn check_tree(&self, node: &E) -> Result<(), Error> {
        let key = node.key();
        if key.pk() != self.pk {
            return Err(problem::<E>(TreeProblem::OtherTree {
                tree: self.pk.clone(),
                node: key.pk().to_owned(),
            }));
        }
        Ok(())
    }

    /// Inserts a node under the parent its parent field names: the parent and its ancestors
    /// are read (one strongly consistent `GetItem` per level, walking up), then one
    /// `TransactWriteItems` creates the node ([`Error::AlreadyExists`] if its id is taken),
    /// counts it in its parent, which must exist ([`TreeProblem::NoParent`]), and checks
    /// that none of the ancestors read has moved since. A top-level node is the transaction
    /// alone.
    ///
    /// A node deeper than the tree's `max_depth` is refused with [`TreeProblem::TooDeep`]
    /// before anything is written. The depth holds under concurrency: a move that takes an
    /// ancestor of the parent elsewhere (deepening the branch) after the walk cancels the
    /// transaction, and the insert walks again, a few times with backoff
    /// ([`Error::is_tree_changed`] when the branch kept moving). An adjacency node does not
    /// store its depth, so that a move stays one transaction whatever the size of its subtree;
    /// the price is the walk: an insert at depth `d` costs `d - 1` `GetItem` and one
    /// transaction of `d` actions.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), ddb_model::Error> {
    /// use ddb_model::{Entity, local};
    /// use serde::{Deserialize, Serialize};
    ///
    /// #[derive(Entity, Serialize, Deserialize, Debug, Clone)]
    /// #[entity(pk = "SHOP#<shop>", sk = "CAT#<id>")]
    /// #[hierarchy(strategy = adjacency, parent = parent, index = gsi1, max_depth = 2)]
    /// struct Category { shop: String, id: String, parent: Option<String> }
    ///
    /// let db = local::isolated_db().await?;
    /// let shop = Category::tree(&db, "s1");
    /// let cat = |id: &str, parent: Option<&str>| Category {
    ///     shop: "s1".into(), id: id.into(), parent: parent.map(Into::into),
    /// };
    /// shop.insert(&cat("root", None)).await?;
    /// shop.insert(&cat("phones", Some("root"))).await?;
    /// let err = shop.insert(&cat("cases", Some("phones"))).await.unwrap_err();
    /// assert!(err.is_tree_too_deep()); // depth 3 in a tree of 2 levels: nothing written
    /// assert!(shop.get("cases").await?.is_none());
    /// # Ok(()) }
    /// ```
    pub async fn insert<'b>(&'b self, node: impl Into<Target<'b, E>>) -> Result<(), Error> {
        let mut target = node.into();
        let n = target.get();
        self.check_tree(n)?;
        let id = id_of(n);
        let parent = parent_of(n);
        if parent.as_deref() == Some(id.as_str()) {
            let id = display(&id);
            return Err(problem::<E>(TreeProblem::Cycle { node: id.clone(), parent: id }));
        }
        // The version an exclusive target stores once the node is written.
        let (_, next_version) = crate::ops::put::next_version::<E>(n.version())?;
        let stamp = self.db.stamp(true);
        let sk_attr = index::<E>().and_then(|i| i.sk);
        let (tree, id, parent, node) = (self, id.as_str(), parent.as_deref(), n);
        retry::on_conflict(CONFLICTS, move |_| async move {
            let table = tree.db.table_name();
            let walk = match parent {
                Some(p) => match tree.walk_up(p, id, None).await? {
                    Try::Done(walk) => walk,
                    Try::Again(err) => return Ok(Try::Again(err)),
                },
                None => Vec::new(),
            };
            let mut tx = tree.db.transaction().create_with(node, |put| put.at(stamp));
            for (i, a) in walk.iter().enumerate() {
                let a_id = id_of(&a.node);
                if a_id == id {
                    // The node exists already (above its parent): the create fails.
                    continue;
                }
                let stored = sk_attr.map(|attr| (attr, a.index_sk.as_deref()));
                let key = (tree.pk.clone(), Some(node_sk::<E>(&a_id)));
                let (item, size) = match (i, stored) {
                    // The parent counts its new child; its revision stops a delete that read
                    // it before.
                    (0, stored) => counter::<E>(table, &tree.pk, &a_id, 1, 1, stored)?,
                    (_, Some(stored)) => same_parent::<E>(table, &tree.pk, &a_id, stored)?,
                    (_, None) => continue,
                };
                tx = tx.raw(E::NAME, key, item, size);
            }
            // No bulk load in progress (it writes whatever it loads unconditionally), and no
            // large delete of an ancestor.
            let mut lineage: Vec<String> = walk.iter().map(|a| id_of(&a.node)).collect();
            lineage.push(id.to_owned());
            let op_index = tx.len();
            let (item, size) = op_check::<E>(table, &tree.pk, &op_sk::<E>(), Some(&lineage))?;
            tx = tx.raw(E::NAME, (tree.pk.clone(), Some(op_sk::<E>())), item, size);
            let err = match tx.send().await {
                Ok(()) => return Ok(Try::Done(())),
                Err(err) => err,
            };
            let (conditions, other) = failures(&err);
            let changed = || problem::<E>(TreeProblem::NodeChanged { id: display(id) });
            if conditions.contains(&op_index) {
                if let Some(op) = tree.pending().await? {
                    return Err(problem::<E>(TreeProblem::Busy { op }));
                }
                return Ok(Try::Again(changed()));
            }
            match (conditions.first(), parent) {
                (Some(0), _) => Err(action_error(err, 0)),
                // The parent is gone or moved: read again (and report it gone if it is).
                (Some(1), Some(p)) => {
                    Ok(Try::Again(problem::<E>(TreeProblem::NoParent { parent: display(p) })))
                }
                (Some(_), _) => Ok(Try::Again(changed())),
                (None, _) if only_conflict(&conditions, other, &err) => Ok(Try::Again(changed())),
                (None, _) => Err(err),
            }
        })
        .await?;
        target.written(next_version, Some(stamp));
        Ok(())
    }

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
                return Ok(Try::Again(problem::<E>(TreeProblem::NodeChanged {
                    id: display(node),
                })));
            }
            if moving == Some(a.as_str()) {
                return Err(problem::<E>(TreeProblem::Cycle {
                    node: display(node),
                    parent: display(start),
                }));
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
            if walk.len() >= E::TREE.max_depth {
                return Err(problem::<E>(TreeProblem::TooDeep {
                    id: display(node),
                    depth: walk.len() + 1,
                    max: E::TREE.max_depth,
                }));
            }
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
        let changed = || problem::<E>(TreeProblem::NodeChanged { id: display(&x) });
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
                let (item, size) = same_parent::<E>(table, &self.pk, &a_id, stored)?;
                fits.checks.push((a_id, item, size));
            }
            return Ok(Try::Done(fits));
        }
        // Deeper than before: the subtree's height decides.
        let below = E::TREE.max_depth.saturating_sub(depth);
        let Some(levels) = self.read_levels(&x, below.saturating_add(1)).await? else {
            return Err(problem::<E>(TreeProblem::NoNode { id: display(&x) }));
        };
        if let Some(deep) = levels.get(below + 1).and_then(|level| level.first()) {
            return Err(problem::<E>(TreeProblem::TooDeep {
                id: display(&id_of(&deep.node)),
                depth: depth + below + 1,
                max: E::TREE.max_depth,
            }));
        }
        let below_x = || levels.iter().skip(1).flatten();
        if below_x().any(|r| walked.contains(&id_of(&r.node))) {
            // The reads saw the destination both above and below the node: it moved.
            return Ok(Try::Again(changed()));
        }
        for raw in levels.iter().skip(1).rev().flatten().take(room) {
            let id = id_of(&raw.node);
            let mut cond = ExprBuilder::default();
            let guard = guard::<E>(&mut cond, raw.rev, None);
            let key = key_of::<E>(&self.pk, &node_sk::<E>(&id));
            let size = item_size(&key);
            let check = Action::check(key).guarded(guard, cond).into_transact_item(table)?;
            fits.checks.push((id, check, size));
        }
        Ok(Try::Done(fits))
    }

    async fn move_node(&self, x: &str, p: Option<&str>) -> Result<OpReport, Error> {
        if p == Some(x) {
            let x = display(x);
            return Err(problem::<E>(TreeProblem::Cycle { node: x.clone(), parent: x }));
        }
        let table = self.db.table_name();
        let Some(sk_attr) = index::<E>().and_then(|i| i.sk) else {
            return Err(Error::Internal {
                problem: crate::error::InternalProblem::NoSortKey { entity: E::NAME },
            });
        };
        let (tree, sk_attr) = (self, sk_attr);
        moving(E::NAME, MOVE_CONFLICTS, display(x), move |_| async move {
            let changed = || problem::<E>(TreeProblem::NodeChanged { id: display(x) });
            let Some(x_raw) = tree.raw(x).await? else {
                return Err(problem::<E>(TreeProblem::NoNode { id: display(x) }));
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
            let mut node = crate::tree::node::clone_node(&x_raw.node)?;
            node.set_parent_id(match p {
                Some(p) => Some(id_value::<E>(p)?),
                None => None,
            });
            let old_item = to_item(&x_raw.node, x_raw.node.version())?;
            let new_item = to_item(&node, node.version())?;
            let mut tx = tree.db.transaction();
            let stored = (sk_attr, x_raw.index_sk.as_deref());
            let (action, size) = move_update::<E>(table, &old_item, new_item, x_raw.rev, stored)?;
            tx = tx.raw(E::NAME, (tree.pk.clone(), Some(node_sk::<E>(x))), action, size);
            if let Some(op) = old_parent.as_ref().filter(|op| !walked.contains(op)) {
                let stored = fits.old_parent.as_deref().map(|v| (sk_attr, Some(v)));
                let (item, size) = counter::<E>(table, &tree.pk, op, -1, 0, stored)?;
                tx = tx.raw(E::NAME, (tree.pk.clone(), Some(node_sk::<E>(op))), item, size);
            }
            for (id, item, size) in fits.checks {
                tx = tx.raw(E::NAME, (tree.pk.clone(), Some(node_sk::<E>(&id))), item, size);
            }
            for (i, (a, a_id)) in walk.iter().zip(&walked).enumerate() {
                let sk = node_sk::<E>(a_id);
                let stored = (sk_attr, a.index_sk.as_deref());
                // The new parent gains a child; the old one, if it is an ancestor of the
                // new one, loses one; the others are only checked.
                let kids = i64::from(i == 0) - i64::from(old_parent.as_ref() == Some(a_id));
                let rev = u64::from(i == 0);
                let (item, size) = if kids == 0 && rev == 0 {
                    same_parent::<E>(table, &tree.pk, a_id, stored)?
                } else {
                    counter::<E>(table, &tree.pk, a_id, kids, rev, Some(stored))?
                };
                tx = tx.raw(E::NAME, (tree.pk.clone(), Some(sk)), item, size);
            }
            let op_index = tx.len();
            let (item, size) = op_check::<E>(table, &tree.pk, &op_sk::<E>(), None)?;
            tx = tx.raw(E::NAME, (tree.pk.clone(), Some(op_sk::<E>())), item, size);
            let err = match tx.send().await {
                Ok(()) => return Ok(Try::Done(OpReport { nodes: 1, resumable: false })),
                Err(err) => err,
            };
            let (conditions, other) = failures(&err);
            if conditions.contains(&op_index) {
                if let Some(op) = tree.pending().await? {
                    return Err(problem::<E>(TreeProblem::Busy { op }));
                }
                return Ok(Try::Again(changed()));
            }
            if conditions.is_empty() && !only_conflict(&conditions, other, &err) {
                return Err(err);
            }
            Ok(Try::Again(changed()))
        })
        .await
    }

    /// The large delete in progress on this tree (or interrupted), if any: one strongly
    /// consistent `GetItem`.
    pub async fn pending(&self) -> Result<Option<TreeOp>, Error> {
        let item = get_raw::<E>(self.db, &self.pk, &op_sk::<E>()).await?;
        item.map(|item| TreeOp::from_item(&item).map_err(problem::<E>)).transpose()
    }

    /// Finishes an interrupted delete: deletes what is left of its subtree. `Ok(None)` when
    /// nothing was pending.
    ///
    /// Safe while the original delete still runs: `resume` advances the intent's epoch
    /// before it writes, and every transaction of the delete checks that epoch, so the
    /// original writer (and any request it had in flight) stops with
    /// [`TreeProblem::Superseded`] instead of deleting nodes inserted after the takeover.
    pub async fn resume(
        &self,
        progress: impl FnMut(Progress) + Send,
    ) -> Result<Option<OpReport>, Error> {
        let Some(op) = self.pending().await? else {
            return Ok(None);
        };
        if matches!(op.kind, OpKind::Load { .. }) {
            let mut progress: ProgressFn<'_> = Box::new(progress);
            return crate::tree::bulk::resume(self, op, &mut progress).await;
        }
        let OpKind::DeleteNode { node } = &op.kind else {
            return Err(problem::<E>(TreeProblem::CorruptIntent {
                reason: format!("{op} is not an operation of an adjacency tree"),
            }));
        };
        let x = esc(node);
        let Some(op) = take_over::<E>(self.db, &self.pk, &op_sk::<E>(), &op).await? else {
            return Ok(None);
        };
        let mut progress: ProgressFn<'_> = Box::new(progress);
        let nodes = self.delete_all(&x, None, Some(&op), &mut progress).await?;
        clear_intent::<E>(self.db, &self.pk, &op_sk::<E>(), &op).await?;
        Ok(Some(OpReport { nodes, resumable: true }))
    }

    /// Undoes an interrupted operation: an adjacency tree's only resumable operation is a
    /// large delete, which cannot be undone ([`TreeProblem::CannotRollBack`]; finish it with
    /// [`resume`](AdjacencyTree::resume)). `Ok(None)` when nothing was pending: one strongly
    /// consistent `GetItem`.
    pub async fn rollback(&self) -> Result<Option<OpReport>, Error> {
        match self.pending().await? {
            None => Ok(None),
            Some(op) if matches!(op.kind, OpKind::Load { .. }) => {
                crate::tree::bulk::rollback(self, op).await
            }
            Some(op) if matches!(op.kind, OpKind::DeleteNode { .. }) => {
                Err(problem::<E>(TreeProblem::CannotRollBack { op }))
            }
            Some(op) => Err(problem::<E>(TreeProblem::CorruptIntent {
                reason: format!("{op} is not an operation of an adjacency tree"),
            })),
        }
    }
}

/// What a move checks so that its subtree still fits under `max_depth` when it commits (see
/// `AdjacencyTree::subtree_fits`).
struct Fits {
    /// The index sort key the old parent was read with (its counter checks it), when the
    /// old branch was read.
    old_parent: Option<String>,
    /// Conditions on other nodes: (escaped id, action, size).
    checks: Vec<(String, TransactWriteItem, usize)>,
}

/// The id value of an escaped id.
fn id_value<E: IdHierarchy>(id: &str) -> Result<E::Id, Error> {
    let corrupt =
        |reason: String| problem::<E>(TreeProblem::CorruptNode { id: display(id), reason });
    let text = crate::key::unescape(id).map_err(|e| corrupt(e.to_string()))?;
    E::id_from_text(&text).map_err(|e| corrupt(e.to_string()))
}

/// Adds `kids` to the children counter and `rev` to the revision of node `id`, which must
/// exist (and, with `stored`, still have the index key read).
pub(super) fn counter<E: IdHierarchy>(
    table: &str,
    pk: &str,
    id: &str,
    kids: i64,
    rev: u64,
    stored: Option<(&str, Option<&str>)>,
) -> Result<(TransactWriteItem, usize), Error> {
    let mut x = ExprBuilder::default();
    let mut cond = is_node::<E>(&mut x);
    if let Some((attr, value)) = stored {
        cond.push_str(&same_key(&mut x, attr, value));
    }
    let kids_name = x.name(TREE_KIDS_ATTR);
    let kids_value = x.value(AttributeValue::N(kids.to_string()));
    let mut update = format!("ADD {kids_name} {kids_value}");
    if rev > 0 {
        let rev_name = x.name(TREE_REV_ATTR);
        let rev_value = x.value(AttributeValue::N(rev.to_string()));
        update.push_str(&format!(", {rev_name} {rev_value}"));
    }
    let key = key_of::<E>(pk, &node_sk::<E>(id));
    let size = item_size(&key) + 16;
    let update = Action::update(key, update).guarded(cond, x).into_transact_item(table)?;
    Ok((update, size))
}

/// ` AND <attr> = <value>` (or that the attribute is missing).
pub(super) fn same_key(x: &mut ExprBuilder, attr: &str, value: Option<&str>) -> String {
    let name = x.name(attr);
    match value {
        Some(v) => {
            let v = x.value(s(v));
            format!(" AND {name} = {v}")
        }
        None => format!(" AND attribute_not_exists({name})"),
    }
}

/// Checks that node `id` still has the parent it was read with (its index key).
fn same_parent<E: IdHierarchy>(
    table: &str,
    pk: &str,
    id: &str,
    (attr, value): (&str, Option<&str>),
) -> Result<(TransactWriteItem, usize), Error> {
    let mut x = ExprBuilder::default();
    let mut cond = is_node::<E>(&mut x);
    cond.push_str(&same_key(&mut x, attr, value));
    let key = key_of::<E>(pk, &node_sk::<E>(id));
    let size = item_size(&key);
    let check = Action::check(key).guarded(cond, x).return_old(true).into_transact_item(table)?;
    Ok((check, size))
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
) -> Result<(TransactWriteItem, usize), Error> {
    let mut x = ExprBuilder::default();
    let mut cond = guard::<E>(&mut x, rev, None);
    cond.push_str(&same_key(&mut x, attr, value));
    let rev_name = x.name(TREE_REV_ATTR);
    let one = x.value(AttributeValue::N("1".into()));
    let mut adds = vec![format!("{rev_name} {one}")];
    if let Some(def) = E::VERSION {
        let name = x.name(def.attr);
        adds.push(format!("{name} {one}"));
    }
    let table_pk = <E::Table as crate::Table>::PK;
    let table_sk = <E::Table as crate::Table>::SK;
    let skip = |attr: &str| {
        attr == TREE_REV_ATTR
            || attr == TREE_KIDS_ATTR
            || E::VERSION.is_some_and(|d| d.attr == attr)
            || attr == table_pk
            || table_sk == Some(attr)
    };
    let mut sets = Vec::new();
    let mut size = 16;
    for (attr, value) in &new {
        if skip(attr) || old.get(attr) == Some(value) {
            continue;
        }
        size += item_size(&Item::from([(attr.clone(), value.clone())]));
        let name = x.name(attr);
        let v = x.value(value.clone());
        sets.push(format!("{name} = {v}"));
    }
    let removes: Vec<String> = old
        .keys()
        .filter(|attr| !skip(attr) && !new.contains_key(*attr))
        .map(|attr| x.name(attr))
        .collect();
    let mut update = String::new();
    if !sets.is_empty() {
        update.push_str(&format!("SET {} ", sets.join(", ")));
    }
    if !removes.is_empty() {
        update.push_str(&format!("REMOVE {} ", removes.join(", ")));
    }
    update.push_str(&format!("ADD {}", adds.join(", ")));
    let key: Item = [Some(table_pk), table_sk]
        .into_iter()
        .flatten()
        .filter_map(|attr| new.get(attr).map(|v| (attr.to_owned(), v.clone())))
        .collect();
    size += item_size(&key);
    let action = Action::update(key, update).guarded(cond, x).into_transact_item(table)?;
    Ok((action, size))
}

/// Sends a move of an adjacency subtree (one transaction whatever its size: no limit).
pub(super) async fn send_move<E: IdHierarchy>(
    mv: Move<'_, '_, E, Adjacency>,
) -> Result<OpReport, Error> {
    let Move { tree, from: id, to: parent, progress, .. } = mv;
    let report = tree.move_node(&id, parent.as_deref()).await?;
    if let Some(mut progress) = progress {
        let n = report.nodes;
        progress(Progress { phase: OpPhase::Switch, done: n, total: n });
    }
    Ok(report)
}
