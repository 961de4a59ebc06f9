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
    /// reasons.
    ///
    /// ```
    /// # use ddb_model::prelude::*;
    /// # use serde::{Deserialize, Serialize};
    /// # #[derive(Entity, Serialize, Deserialize)]
    /// # #[entity(pk = "ORG#<id>", sk = "ORG")]
    /// # struct Org { id: String, active: bool }
    /// # #[derive(Entity, Serialize, Deserialize)]
    /// # #[entity(pk = "ORG#<org>", sk = "USER#<id>")]
    /// # struct Member { org: String, id: String }
    /// # async fn demo(db: &Db, member: &Member) -> Result<(), Error> {
    /// db.transaction().check(Org::key(&member.org), Org::ACTIVE.eq(true)).create(member).await?;
    /// # Ok(()) }
    /// ```
    pub fn check<E: Entity<Table = T>>(self, key: Key<E>, condition: Condition<E>) -> Self {
        let guard = Guard { kind: WriteKind::Check, expected_version: None };
        let node = condition.into_node();
        self.push_check(key, guard, Some(node))
    }

    /// Requires an item of entity type `E` under `key` ([`Error::NotFound`](crate::Error::NotFound) or
    /// [`Error::WrongEntityType`](crate::Error::WrongEntityType) in the reasons otherwise), without writing it.
    ///
    /// ```
    /// # use ddb_model::prelude::*;
    /// # use serde::{Deserialize, Serialize};
    /// # #[derive(Entity, Serialize, Deserialize)]
    /// # #[entity(pk = "USER#<id>", sk = "PROFILE")]
    /// # struct User { id: String }
    /// # #[derive(Entity, Serialize, Deserialize)]
    /// # #[entity(pk = "USER#<user>", sk = "POST#<id>")]
    /// # struct Post { user: String, id: String }
    /// # async fn demo(db: &Db, post: &Post) -> Result<(), Error> {
    /// db.transaction().check_exists(User::key(&post.user)).create(post).await?;
    /// # Ok(()) }
    /// ```
    pub fn check_exists<E: Entity<Table = T>>(self, key: Key<E>) -> Self {
        let guard = Guard { kind: WriteKind::Check, expected_version: None };
        self.push_check(key, guard, None)
    }

    /// Requires that no item exists under `key` ([`Error::AlreadyExists`](crate::Error::AlreadyExists) with the stored
    /// item in the reasons otherwise), without writing it.
    ///
    /// ```
    /// # use ddb_model::prelude::*;
    /// # use serde::{Deserialize, Serialize};
    /// # #[derive(Entity, Serialize, Deserialize)]
    /// # #[entity(pk = "BAN#<user>", sk = "BAN")]
    /// # struct Ban { user: String }
    /// # #[derive(Entity, Serialize, Deserialize)]
    /// # #[entity(pk = "USER#<user>", sk = "COMMENT#<id>")]
    /// # struct Comment { user: String, id: String }
    /// # async fn demo(db: &Db, comment: &Comment) -> Result<(), Error> {
    /// db.transaction().check_not_exists(Ban::key(&comment.user)).create(comment).await?;
    /// # Ok(()) }
    /// ```
    pub fn check_not_exists<E: Entity<Table = T>>(self, key: Key<E>) -> Self {
        let guard = Guard { kind: WriteKind::Create, expected_version: None };
        self.push_check(key, guard, None)
    }

    /// Requires the item of `key` to be stored at `version` (optimistic locking on an item the
    /// transaction does not write): [`Error::VersionConflict`](crate::Error::VersionConflict) in the reasons otherwise.
    /// `E` must have a version field.
    ///
    /// ```
    /// # use ddb_model::prelude::*;
    /// # use serde::{Deserialize, Serialize};
    /// # #[derive(Entity, Serialize, Deserialize)]
    /// # #[entity(pk = "DOC#<id>", sk = "DOC", version = version)]
    /// # struct Doc { id: String, version: u64 }
    /// # #[derive(Entity, Serialize, Deserialize)]
    /// # #[entity(pk = "DOC#<doc>", sk = "COMMENT#<id>")]
    /// # struct Comment { doc: String, id: String }
    /// # async fn demo(db: &Db, doc: &Doc, comment: &Comment) -> Result<(), Error> {
    /// // Comment on the version of the document the user saw.
    /// db.transaction().check_version(doc.key(), doc.version).create(comment).await?;
    /// # Ok(()) }
    /// ```
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
