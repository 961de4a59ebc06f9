//! Adjacency writes: insert, move and delete (chunked, resumable under an intent record),
//! and the conditions that keep the parent references and children counters exact.

use super::*;

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

    /// Moves the node `id` and its subtree under `parent`; see [`AdjacencyMove`]. One
    /// transaction, whatever the size of the subtree.
    pub fn move_subtree(
        &self,
        id: impl KeyArg<E::Id>,
        parent: impl KeyArg<E::Id>,
    ) -> AdjacencyMove<'a, 'static, E> {
        AdjacencyMove {
            tree: self.clone(),
            id: arg_text::<E>(&id),
            parent: Some(arg_text::<E>(&parent)),
            progress: None,
        }
    }

    /// Moves the node `id` and its subtree under `parent`: the same as
    /// [`move_subtree`](AdjacencyTree::move_subtree), under the name all strategies share.
    pub fn move_under(
        &self,
        id: impl KeyArg<E::Id>,
        parent: impl KeyArg<E::Id>,
    ) -> AdjacencyMove<'a, 'static, E> {
        self.move_subtree(id, parent)
    }

    /// Moves the node `id` and its subtree to the top level; see [`AdjacencyMove`].
    pub fn move_to_top(&self, id: impl KeyArg<E::Id>) -> AdjacencyMove<'a, 'static, E> {
        AdjacencyMove { tree: self.clone(), id: arg_text::<E>(&id), parent: None, progress: None }
    }

    async fn move_node(&self, x: &str, p: Option<&str>) -> Result<OpReport, Error> {
        if p == Some(x) {
            let x = display(x);
            return Err(problem::<E>(TreeProblem::Cycle { node: x.clone(), parent: x }));
        }
        let table = self.db.table_name();
        let Some(sk_attr) = index::<E>().and_then(|i| i.sk) else {
            return Err(Error::Internal {
                problem: crate::InternalProblem::NoSortKey { entity: E::NAME },
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

    /// Deletes the node `id` and its whole subtree; see [`AdjacencyDelete`].
    pub fn delete_subtree(&self, id: impl KeyArg<E::Id>) -> AdjacencyDelete<'a, 'static, E> {
        AdjacencyDelete { tree: self.clone(), id: arg_text::<E>(&id), progress: None, limit: 99 }
    }

    /// The subtree of `x` (escaped), strongly consistent: the nodes level by level from the
    /// index, each checked against its children counter (read again while the index lags).
    /// Deepest nodes first. `None` when `x` does not exist.
    async fn read_subtree(&self, x: &str) -> Result<Option<Vec<Raw<E>>>, Error> {
        let levels = self.read_levels(x, usize::MAX).await?;
        Ok(levels.map(|levels| {
            let mut all: Vec<Raw<E>> = levels.into_iter().flatten().collect();
            all.reverse();
            all
        }))
    }

    /// The top `1 + below` levels of the subtree of `x` (escaped), strongly consistent:
    /// `x`, its children, ..., down to relative depth `below` (fewer when the subtree ends
    /// before). Each level is read from the index and checked against the children counters
    /// of the level above (read again while the index lags). `None` when `x` does not exist.
    async fn read_levels(&self, x: &str, below: usize) -> Result<Option<Vec<Vec<Raw<E>>>>, Error> {
        retry::on_conflict(INDEX_LAG, move |_| async move {
            let changed = || problem::<E>(TreeProblem::NodeChanged { id: display(x) });
            let Some(root) = self.raw(x).await? else {
                return Ok(Try::Done(None));
            };
            let mut seen: std::collections::HashSet<String> =
                std::iter::once(id_of(&root.node)).collect();
            let mut levels = vec![vec![root]];
            while let Some(last) = levels.last().filter(|_| levels.len() <= below) {
                let parents: Vec<String> =
                    last.iter().filter(|r| r.kids > 0).map(|r| id_of(&r.node)).collect();
                if parents.is_empty() {
                    break;
                }
                let expected: u64 = last.iter().map(|r| r.kids).sum();
                let found = self.next_level_ids(&parents, LEVEL_CONCURRENCY).await?;
                let ids: Vec<String> = found.iter().map(id_of).collect();
                let level = if ids.is_empty() { Vec::new() } else { self.read_raw(&ids).await? };
                // A node met twice moved between the reads of its parents (children counts
                // can still add up, when another child moved the other way): the subtree
                // changed under the reads, which are done again. A delete never names a
                // node twice.
                if !level.iter().all(|r| seen.insert(id_of(&r.node))) {
                    return Ok(Try::Again(changed()));
                }
                if level.len() as u64 != expected {
                    return Ok(Try::Again(changed()));
                }
                levels.push(level);
            }
            Ok(Try::Done(Some(levels)))
        })
        .await
    }

    /// The nodes `ids` (escaped), strongly consistent (missing ones left out).
    async fn read_raw(&self, ids: &[String]) -> Result<Vec<Raw<E>>, Error> {
        let mut batch = self.db.batch_read().consistent();
        let slots: Vec<_> = ids.iter().map(|id| batch.get(self.key_of(id))).collect();
        let found = batch.await?;
        let mut out = Vec::with_capacity(ids.len());
        for slot in slots {
            if let Some(item) = found.item(slot) {
                out.push(Raw::read(item.clone())?);
            }
        }
        Ok(out)
    }

    /// Deletes the subtree of `x` in transactions of up to [`DELETE_CHUNK`] nodes, deepest
    /// first, each node conditioned on its revision, its parent and its number of children
    /// (see [`node_delete`]); the parent's counter goes down with
    /// `x`. Returns the number of nodes deleted. Under a large delete's intent `fence`, every
    /// transaction also checks that the intent is still at the writer's epoch
    /// ([`TreeProblem::Superseded`] otherwise).
    async fn delete_all(
        &self,
        x: &str,
        first: Option<Vec<Raw<E>>>,
        fence: Option<&TreeOp>,
        progress: &mut ProgressFn<'_>,
    ) -> Result<usize, Error> {
        let table = self.db.table_name();
        let sk_attr = index::<E>().and_then(|i| i.sk);
        // What earlier passes left: the nodes read first (used by the first pass), the
        // nodes deleted so far, the progress callback.
        let first = Mutex::new(first);
        let done = AtomicUsize::new(0);
        let progress = Mutex::new(progress);
        let (first, done, progress) = (&first, &done, &progress);
        retry::on_conflict(CONFLICTS, move |_| async move {
            let changed = || problem::<E>(TreeProblem::NodeChanged { id: display(x) });
            let taken = first.lock().unwrap_or_else(PoisonError::into_inner).take();
            let nodes = match taken {
                Some(nodes) => nodes,
                None => match self.read_subtree(x).await? {
                    Some(nodes) => nodes,
                    None => return Ok(Try::Done(done.load(Ordering::Relaxed))),
                },
            };
            let total = done.load(Ordering::Relaxed) + nodes.len();
            // The children this pass's committed chunks deleted, per parent still standing.
            let mut gone: HashMap<String, u64> = HashMap::new();
            for chunk in chunks(&nodes) {
                let mut tx = self.db.transaction();
                for raw in &chunk.nodes {
                    let id = id_of(&raw.node);
                    let kids = raw.kids.saturating_sub(gone.get(&id).copied().unwrap_or(0));
                    let stored = sk_attr.map(|attr| (attr, raw.index_sk.as_deref()));
                    let (item, size) = node_delete::<E>(table, &self.pk, &id, raw, kids, stored)?;
                    tx = tx.raw(E::NAME, (self.pk.clone(), Some(node_sk::<E>(&id))), item, size);
                }
                // The parents that stay (for now) count their deleted children.
                for (p, n) in &chunk.parents {
                    let (item, size) = counter::<E>(table, &self.pk, p, -n, 0, None)?;
                    tx = tx.raw(E::NAME, (self.pk.clone(), Some(node_sk::<E>(p))), item, size);
                }
                let fence_at = chunk.nodes.len() + chunk.parents.len();
                if let Some(op) = fence {
                    let (item, size) = fence_check::<E>(table, &self.pk, &op_sk::<E>(), op)?;
                    tx = tx.raw(E::NAME, (self.pk.clone(), Some(op_sk::<E>())), item, size);
                }
                if let Err(err) = tx.send().await {
                    let (conditions, other) = failures(&err);
                    if let Some(op) = fence.filter(|_| conditions.contains(&fence_at)) {
                        return Err(superseded::<E>(op));
                    }
                    if conditions.is_empty() && !only_conflict(&conditions, other, &err) {
                        return Err(err);
                    }
                    // The subtree changed: read it again.
                    return Ok(Try::Again(changed()));
                }
                for (p, n) in &chunk.parents {
                    *gone.entry(p.clone()).or_default() += n.unsigned_abs();
                }
                let now = done.fetch_add(chunk.nodes.len(), Ordering::Relaxed) + chunk.nodes.len();
                let mut progress = progress.lock().unwrap_or_else(PoisonError::into_inner);
                (**progress)(Progress { phase: OpPhase::Remove, done: now, total });
            }
            Ok(Try::Done(done.load(Ordering::Relaxed)))
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
    /// Conditions on other nodes: (escaped id, action, size).
    checks: Vec<(String, TransactWriteItem, usize)>,
}

/// One transaction of a delete: nodes, deepest first, and the parents outside it with the
/// number of their children it deletes.
struct Chunk<'n, E> {
    nodes: Vec<&'n Raw<E>>,
    parents: Vec<(String, i64)>,
}

/// Splits `nodes` (deepest first) into transactions of at most 99 actions: one per node and
/// one per parent outside the transaction.
fn chunks<E: IdHierarchy>(nodes: &[Raw<E>]) -> Vec<Chunk<'_, E>> {
    let mut out = Vec::new();
    let mut current: Vec<&Raw<E>> = Vec::new();
    let parents_of = |chunk: &[&Raw<E>]| -> Vec<(String, i64)> {
        let inside: std::collections::HashSet<String> =
            chunk.iter().map(|r| id_of(&r.node)).collect();
        let mut parents: Vec<(String, i64)> = Vec::new();
        for r in chunk {
            if let Some(p) = parent_of(&r.node).filter(|p| !inside.contains(p)) {
                match parents.iter_mut().find(|(q, _)| *q == p) {
                    Some((_, n)) => *n += 1,
                    None => parents.push((p, 1)),
                }
            }
        }
        parents
    };
    for raw in nodes {
        current.push(raw);
        if current.len() + parents_of(&current).len() > DELETE_CHUNK + 1 {
            current.pop();
            let parents = parents_of(&current);
            out.push(Chunk { nodes: std::mem::take(&mut current), parents });
            current.push(raw);
        }
    }
    if !current.is_empty() {
        let parents = parents_of(&current);
        out.push(Chunk { nodes: current, parents });
    }
    out
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
fn same_key(x: &mut ExprBuilder, attr: &str, value: Option<&str>) -> String {
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

/// Deletes the node `id` of a delete's subtree only if it is still the node `raw` read: the
/// same revision (nothing inserted or moved under it since), the same parent (its index
/// key `stored`; the parent outside the transaction is counted down) and `kids` children
/// (those read, less the ones earlier transactions of the delete removed). The revision
/// alone does not say it: it restarts when a node is deleted and inserted again, so a node
/// inserted again elsewhere, or under a parent inserted again with other children, could
/// match it, and the delete would leave a counter too high or an orphan.
fn node_delete<E: IdHierarchy>(
    table: &str,
    pk: &str,
    id: &str,
    raw: &Raw<E>,
    kids: u64,
    stored: Option<(&str, Option<&str>)>,
) -> Result<(TransactWriteItem, usize), Error> {
    let mut x = ExprBuilder::default();
    let mut cond = guard::<E>(&mut x, raw.rev, raw.node.version());
    if let Some((attr, value)) = stored {
        cond.push_str(&same_key(&mut x, attr, value));
    }
    let kids_name = x.name(TREE_KIDS_ATTR);
    let kids_value = x.value(AttributeValue::N(kids.to_string()));
    if kids == 0 {
        cond.push_str(&format!(
            " AND (attribute_not_exists({kids_name}) OR {kids_name} = {kids_value})"
        ));
    } else {
        cond.push_str(&format!(" AND {kids_name} = {kids_value}"));
    }
    let key = key_of::<E>(pk, &node_sk::<E>(id));
    let size = item_size(&key);
    let delete = Action::delete(key).guarded(cond, x).into_transact_item(table)?;
    Ok((delete, size))
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

/// A move of an adjacency subtree; made by [`AdjacencyTree::move_subtree`] and
/// [`AdjacencyTree::move_to_top`], sent by `.await` (or [`send`](AdjacencyMove::send)).
///
/// The ancestors of the new parent are walked first (one strongly consistent `GetItem`
/// each) so that the move cannot make a cycle ([`TreeProblem::Cycle`]) nor put the node
/// deeper than `max_depth` ([`TreeProblem::TooDeep`]; for a node with children, the whole
/// subtree must fit: see the module docs for what is read); then one
/// `TransactWriteItems` rewrites the node with its new parent, moves it between the parents'
/// counters and checks that none of the walked ancestors moved meanwhile. A transaction
/// canceled by a concurrent write (a move of an ancestor, an insert under one of the parents
/// at the same moment) is read and tried again: up to 8 tries with exponential backoff and
/// jitter (about 1.5 s of pauses at most), then [`TreeProblem::Contended`]
/// ([`Error::is_tree_contended`]), nothing written. Nothing below the node changes:
/// the cost does not depend on the size of the subtree, and there is no resumable protocol
/// for a move. Checked: the node exists ([`TreeProblem::NoNode`]), the new parent exists
/// ([`TreeProblem::NoParent`]), no large delete is in progress ([`TreeProblem::Busy`]).
///
/// The report counts the node items rewritten: 1, or 0 when the node is under that parent
/// already (nothing is written).
#[must_use = "a move does nothing until it is awaited"]
pub struct AdjacencyMove<'a, 'p, E: IdHierarchy> {
    tree: AdjacencyTree<'a, E>,
    id: String,
    parent: Option<String>,
    progress: Option<ProgressFn<'p>>,
}

impl<'a, 'p, E: IdHierarchy> AdjacencyMove<'a, 'p, E> {
    /// Calls `f` once the move is done (phase [`OpPhase::Switch`], with the report's node
    /// count).
    pub fn on_progress<'q>(self, f: impl FnMut(Progress) + Send + 'q) -> AdjacencyMove<'a, 'q, E> {
        AdjacencyMove {
            tree: self.tree,
            id: self.id,
            parent: self.parent,
            progress: Some(Box::new(f)),
        }
    }

    /// Sends the move.
    pub async fn send(self) -> Result<OpReport, Error> {
        let AdjacencyMove { tree, id, parent, progress } = self;
        let report = tree.move_node(&id, parent.as_deref()).await?;
        if let Some(mut progress) = progress {
            let n = report.nodes;
            progress(Progress { phase: OpPhase::Switch, done: n, total: n });
        }
        Ok(report)
    }
}

impl<'a, 'p, E: IdHierarchy> IntoFuture for AdjacencyMove<'a, 'p, E>
where
    'p: 'a,
{
    type Output = Result<OpReport, Error>;
    type IntoFuture = BoxFuture<'a, Self::Output>;
    fn into_future(self) -> Self::IntoFuture {
        Box::pin(self.send())
    }
}

/// A delete of an adjacency subtree; made by [`AdjacencyTree::delete_subtree`], sent by
/// `.await` (or [`send`](AdjacencyDelete::send)).
///
/// The subtree is read level by level (each level's nodes strongly consistently, checked
/// against their children counters), then deleted deepest first in transactions of up to 98
/// nodes, each node conditioned on its revision, its parent and its number of children: a
/// node inserted under the subtree meanwhile (or a node deleted and inserted again
/// elsewhere) makes the delete read again, never an orphan or a wrong counter. A subtree of more than 99 nodes
/// (or of more than [`transaction_limit`](AdjacencyDelete::transaction_limit)) is deleted
/// under an intent record, so that [`AdjacencyTree::resume`] finishes an interrupted delete
/// (what is left of it is always a tree), and moves wait for it.
#[must_use = "a delete does nothing until it is awaited"]
pub struct AdjacencyDelete<'a, 'p, E: IdHierarchy> {
    tree: AdjacencyTree<'a, E>,
    id: String,
    progress: Option<ProgressFn<'p>>,
    limit: usize,
}

impl<'a, 'p, E: IdHierarchy> AdjacencyDelete<'a, 'p, E> {
    /// Calls `f` after every transaction of the delete.
    pub fn on_progress<'q>(
        self,
        f: impl FnMut(Progress) + Send + 'q,
    ) -> AdjacencyDelete<'a, 'q, E> {
        AdjacencyDelete {
            tree: self.tree,
            id: self.id,
            progress: Some(Box::new(f)),
            limit: self.limit,
        }
    }

    /// Deletes subtrees of more than `n` nodes under an intent record (see above).
    pub fn transaction_limit(mut self, n: usize) -> Self {
        self.limit = n.min(99);
        self
    }

    /// Sends the delete.
    pub async fn send(self) -> Result<OpReport, Error> {
        let AdjacencyDelete { tree, id, progress, limit } = self;
        let mut progress = progress.unwrap_or_else(|| Box::new(|_| {}));
        let Some(nodes) = tree.read_subtree(&id).await? else {
            return Err(problem::<E>(TreeProblem::NoNode { id: display(&id) }));
        };
        if nodes.len() <= limit {
            if let Some(op) = tree.pending().await? {
                return Err(problem::<E>(TreeProblem::Busy { op }));
            }
            let n = tree.delete_all(&id, Some(nodes), None, &mut progress).await?;
            return Ok(OpReport { nodes: n, resumable: false });
        }
        let op = TreeOp {
            kind: OpKind::DeleteNode { node: display(&id) },
            phase: OpPhase::Remove,
            token: crate::ops::idempotency_token(),
            epoch: 0,
        };
        let fields = op.fields();
        let fields: Vec<(&str, &str)> = fields.iter().map(|(a, v)| (*a, v.as_str())).collect();
        if let Err(stored) = put_intent::<E>(tree.db, &tree.pk, &op_sk::<E>(), &fields).await? {
            return Err(match stored.as_ref().map(TreeOp::from_item) {
                Some(Ok(op)) => problem::<E>(TreeProblem::Busy { op }),
                Some(Err(corrupt)) => problem::<E>(corrupt),
                None => problem::<E>(TreeProblem::CorruptIntent {
                    reason: "an operation is in progress, but its record was not returned".into(),
                }),
            });
        }
        let n = tree.delete_all(&id, Some(nodes), Some(&op), &mut progress).await?;
        clear_intent::<E>(tree.db, &tree.pk, &op_sk::<E>(), &op).await?;
        Ok(OpReport { nodes: n, resumable: true })
    }
}

impl<'a, 'p, E: IdHierarchy> IntoFuture for AdjacencyDelete<'a, 'p, E>
where
    'p: 'a,
{
    type Output = Result<OpReport, Error>;
    type IntoFuture = BoxFuture<'a, Self::Output>;
    fn into_future(self) -> Self::IntoFuture {
        Box::pin(self.send())
    }
}
