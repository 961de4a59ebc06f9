//! Typed updates of a closure node: the same actions on the entity item and on every copy,
//! in one transaction.

use super::{ClosureTree, copy_sk};
use crate::error::{Error, NodeReason};
use crate::expr::{Condition, ExprBuilder, Touch, UpdateActions, UpdateVerbs};
use crate::key::KeyArg;
use crate::ops::action::Action;
use crate::ops::retry::{self, CONFLICTS};
use crate::ops::{BoxFuture, Running, Startable, builder_future};
use crate::tree::node::{IdHierarchy, arg_text, clone_node, display, no_node};
use crate::tree::raw::{RawAction, key_of};
use crate::tree::{TREE_REV_ATTR, TreeProblem, problem};

use super::write::{copy_sks, is_copy, own_is};

impl<'a, E: IdHierarchy> ClosureTree<'a, E> {
    /// Changes fields of the node `id` in place, on its entity item and on every copy of it
    /// the tree keeps (its own copy, one under each ancestor, one under the tree); see
    /// [`ClosureUpdate`]. This is the typed update of a closure node: a plain
    /// `Node::update(&db, ..)` is refused before sending
    /// ([`RequestProblem::UpdateCopies`](crate::error::RequestProblem::UpdateCopies)),
    /// since it would leave the copies that `children`, `descendants` and `ancestors` return
    /// with the old values.
    pub fn update(&self, id: impl KeyArg<E::Id>) -> ClosureUpdate<'a, E> {
        ClosureUpdate {
            tree: self.clone(),
            id: arg_text::<E>(&id),
            actions: UpdateActions::new(),
            condition: None,
            expected_version: None,
            running: Running::default(),
        }
    }
}

/// An update of a closure node and of all its copies; made by [`ClosureTree::update`], sent
/// by `.await` (or [`send`](ClosureUpdate::send)).
///
/// One strongly consistent `GetItem` of the node's own copy (it names the ancestors the
/// copies are under), then one `TransactWriteItems` that applies the same actions to the
/// entity item (with the update's guards and [`condition`](ClosureUpdate::condition):
/// [`Error::NotFound`], [`Error::VersionConflict`], [`Error::ConditionFailed`], and the
/// index keys the changed fields are part of) and to every copy (copies are in no index),
/// conditioned on the node not having moved since it was read (tried again, a few times, if
/// it did; then [`TreeProblem::NodeChanged`]) and on no large operation involving it being
/// in progress ([`TreeProblem::Busy`]). A node at depth `D` is `D + 3` actions: every depth
/// the tree allows fits one transaction.
///
/// `add` and `append` are applied once: the transaction carries an idempotency token, so the
/// SDK's retry of a request whose response was lost does not apply it again. A try whose
/// transaction was canceled by a concurrent move changed nothing, and the next try is a new
/// transaction.
///
/// Refused before anything is sent: a change of the parent field
/// ([`TreeProblem::ParentChanged`]: use [`move_subtree`](ClosureTree::move_subtree)), an
/// update without actions, and what a plain update refuses. A missing node is
/// [`TreeProblem::NoNode`]. The update returns nothing: read the node again with
/// [`get`](ClosureTree::get) (a transaction returns no item). Example: on
/// [`Tree`](crate::tree::Tree).
#[must_use = "an update does nothing until it is awaited"]
pub struct ClosureUpdate<'a, E: IdHierarchy> {
    tree: ClosureTree<'a, E>,
    id: String,
    actions: UpdateActions<E>,
    condition: Option<Condition<E>>,
    expected_version: Option<u64>,
    running: Running<'a, Result<(), Error>>,
}

impl<E: IdHierarchy> UpdateVerbs<E> for ClosureUpdate<'_, E> {
    fn update_actions(&mut self) -> &mut UpdateActions<E> {
        &mut self.actions
    }
}

impl<'a, E: IdHierarchy> ClosureUpdate<'a, E> {
    /// Adds a condition on the stored node (its entity item; combined with AND):
    /// [`Error::ConditionFailed`] when it does not hold, and nothing is written.
    pub fn condition(mut self, condition: Condition<E>) -> Self {
        self.condition = Some(match self.condition.take() {
            Some(c) => c & condition,
            None => condition,
        });
        self
    }

    /// Optimistic locking: the update applies only if the stored version is `version`
    /// ([`Error::VersionConflict`] otherwise).
    pub fn expect_version(mut self, version: u64) -> Self {
        self.expected_version = Some(version);
        self
    }

    /// Sends the update.
    pub async fn send(self) -> Result<(), Error> {
        let ClosureUpdate { tree, id, actions, condition, expected_version, .. } = self;
        let table = tree.db.table_name();
        let version_attr = E::VERSION.map(|v| v.attr);
        // Rendered once before any request: an invalid update is refused before sending.
        actions.render(&mut ExprBuilder::default(), version_attr)?;
        let (tree, id, actions, condition) = (&tree, id.as_str(), &actions, &condition);
        retry::on_conflict(CONFLICTS, move |_| async move {
            let Some(own) = tree.own(id).await? else {
                return Err(no_node::<E>(id));
            };
            if parent_attrs(&own.node)?
                .iter()
                .any(|a| !matches!(actions.touch(a), Touch::Untouched))
            {
                return Err(problem::<E>(TreeProblem::ParentChanged { id: display(id) }));
            }
            // The entity item: the update with its guards and index keys.
            let entity = tree.key_of(id);
            // One time for the item and its copies.
            let stamp = tree.db.stamp(false);
            let mut tx = tree.db.transaction().update(entity, |u| {
                let mut u = u.actions(actions.clone()).copies_handled().at(stamp);
                if let Some(c) = condition {
                    u = u.condition(c.clone());
                }
                if let Some(v) = expected_version {
                    u = u.expect_version(v);
                }
                u
            });
            // The own copy, if it still records the ancestors and revision read (the next
            // revision stops a move or delete that read the old fields), then the others.
            let own_sk = copy_sk::<E>(Some(id), 0, id);
            let read = (own.chain_text.as_str(), own.rev);
            let next_rev = aws_sdk_dynamodb::types::AttributeValue::N((own.rev + 1).to_string());
            let copy_actions = crate::ops::with_updated_at(actions.clone(), stamp)?;
            let actions = &copy_actions;
            let own_actions = actions.clone().set_raw(TREE_REV_ATTR, next_rev);
            tx =
                tree.push(tx, copy_update::<E>(table, &tree.pk, own_sk, &own_actions, Some(read))?);
            for sk in copy_sks::<E>(&own.chain, id) {
                tx = tree.push(tx, copy_update::<E>(table, &tree.pk, sk, actions, None)?);
            }
            tree.send_node_write(tx, &own.chain, id, |_| {
                problem::<E>(TreeProblem::CorruptNode {
                    id: display(id),
                    reason: NodeReason::CopyMissing,
                })
            })
            .await
        })
        .await
    }
}

impl<'a, E: IdHierarchy> Startable<'a> for ClosureUpdate<'a, E> {
    type Raw = Result<(), Error>;
    const DRY_SENDS_READS: bool = true;
    fn running(&mut self) -> &mut Running<'a, Self::Raw> {
        &mut self.running
    }
    fn take_settings(&mut self) -> Self {
        ClosureUpdate {
            tree: self.tree.clone(),
            id: std::mem::take(&mut self.id),
            actions: std::mem::take(&mut self.actions),
            condition: self.condition.take(),
            expected_version: self.expected_version,
            running: Running::default(),
        }
    }
    fn start(self) -> BoxFuture<'a, Self::Raw> {
        crate::ops::boxed(|| self.send())
    }
}

builder_future!(['a, E: IdHierarchy] ClosureUpdate<'a, E> => Result<(), Error>, |r| r);

/// The update of the copy `sk`: the actions (and the version's increment), on a copy that
/// exists (never creating a partial one), or with `own`, on the own copy as it was read.
fn copy_update<E: IdHierarchy>(
    table: &str,
    pk: &str,
    sk: String,
    actions: &UpdateActions<E>,
    own: Option<(&str, u64)>,
) -> Result<RawAction, Error> {
    let mut x = ExprBuilder::default();
    let expression = actions.render(&mut x, E::VERSION.map(|v| v.attr))?;
    let cond = match own {
        Some(read) => own_is::<E>(&mut x, Some(read)),
        None => is_copy::<E>(&mut x),
    };
    let action = Action::update(key_of::<E>(pk, &sk), expression).guarded(cond, x);
    let size = action.size();
    Ok(RawAction { sk, item: action.into_transact_item(table)?, size })
}

/// The stored attributes of the node's parent field: those that differ between the node
/// with and without a parent.
fn parent_attrs<E: IdHierarchy>(node: &E) -> Result<Vec<String>, Error> {
    let fields = crate::model::entity_fields::<E>;
    let id = E::id_from_text(&E::id_text(node.id())).map_err(|e| {
        problem::<E>(TreeProblem::CorruptNode {
            id: E::id_text(node.id()).into_owned(),
            reason: NodeReason::Id { problem: Box::new(e) },
        })
    })?;
    let mut top = clone_node(node)?;
    top.set_parent_id(None);
    let mut below = clone_node(node)?;
    below.set_parent_id(Some(id));
    let (top, below) = (fields(&top)?, fields(&below)?);
    Ok(top
        .keys()
        .chain(below.keys())
        .filter(|a| top.get(*a) != below.get(*a))
        .cloned()
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect())
}
