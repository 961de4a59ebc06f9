//! The actions that write nothing: `check`, `check_exists`, `check_not_exists` and
//! `check_version` (`ConditionCheck`), each requiring something of an item the transaction
//! does not write.

use super::Transaction;
use super::action::check_action;
use crate::expr::{Condition, ExprBuilder, Node};
use crate::key::Key;
use crate::model::{Entity, Table};
use crate::ops::{Guard, Rendered, WriteKind, check_expected_version};

impl<'a, T: Table> Transaction<'a, T> {
    /// Requires the item of `key` to exist, to be of entity type `E` and to satisfy
    /// `condition`, without writing it (`ConditionCheck`). A failed check is
    /// [`Error::NotFound`](crate::Error::NotFound), [`Error::WrongEntityType`](crate::Error::WrongEntityType) or [`Error::ConditionFailed`](crate::Error::ConditionFailed) in the
    /// reasons. Example: [`Transaction`].
    pub fn check<E: Entity<Table = T>>(self, key: Key<E>, condition: Condition<E>) -> Self {
        let guard = Guard { kind: WriteKind::Check, expected_version: None };
        let node = condition.into_node();
        self.push_check(key, guard, Some(node))
    }

    /// Requires an item of entity type `E` under `key` ([`Error::NotFound`](crate::Error::NotFound) or
    /// [`Error::WrongEntityType`](crate::Error::WrongEntityType) in the reasons otherwise), without writing it.
    /// Example: [`Transaction`].
    pub fn check_exists<E: Entity<Table = T>>(self, key: Key<E>) -> Self {
        let guard = Guard { kind: WriteKind::Check, expected_version: None };
        self.push_check(key, guard, None)
    }

    /// Requires that no item exists under `key` ([`Error::AlreadyExists`](crate::Error::AlreadyExists) with the stored
    /// item in the reasons otherwise), without writing it. Example: [`Transaction`].
    pub fn check_not_exists<E: Entity<Table = T>>(self, key: Key<E>) -> Self {
        let guard = Guard { kind: WriteKind::Create, expected_version: None };
        self.push_check(key, guard, None)
    }

    /// Requires the item of `key` to be stored at `version` (optimistic locking on an item the
    /// transaction does not write): [`Error::VersionConflict`](crate::Error::VersionConflict) in the reasons otherwise.
    /// `E` must have a version field. Example: [`Transaction`].
    pub fn check_version<E: Entity<Table = T>>(self, key: Key<E>, version: u64) -> Self {
        let guard = Guard { kind: WriteKind::Check, expected_version: Some(version) };
        self.push_check(key, guard, None)
    }

    fn push_check<E: Entity<Table = T>>(
        self,
        key: Key<E>,
        guard: Guard,
        condition: Option<Node>,
    ) -> Self {
        let table = self.db.table_name();
        let action = key
            .validate()
            .and_then(|()| check_expected_version::<E>(guard.expected_version))
            .and_then(|()| {
                Rendered::new(ExprBuilder::default(), key, guard, condition.as_ref(), None)
            })
            .and_then(|rendered| check_action(table, rendered));
        self.push(action)
    }
}
