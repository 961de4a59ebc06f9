use crate::ops::startable::startable;
use std::marker::PhantomData;

use aws_sdk_dynamodb::types::ReturnValue;

use super::action::{Action, Kind};
use super::transact::{ActionInfo, info};
use super::unique::Change;
use super::write::{self, Write};
use super::{
    Guard, NoReturn, Rendered, ReturnOld, Returns, Running, WriteKind, and_condition,
    builder_future, check_expected_version, key_item, retry,
};
use crate::db::Db;
use crate::error::Error;
use crate::expr::{Condition, ExprBuilder, Node};
use crate::item::Item;
use crate::key::Key;
use crate::model::{Entity, Table, from_item};
use crate::stats::Op;

/// Deletes one item by key. Made by `E::delete(&db, ..)` or [`Db::delete`].
///
/// Deleting a missing item succeeds (deletes are idempotent); an item of another entity type
/// under the key is [`Error::WrongEntityType`] and is left alone. With a
/// [`condition`](Delete::condition) or [`expect_version`](Delete::expect_version), the item
/// must exist ([`Error::NotFound`]) and satisfy them. [`return_old`](Delete::return_old)
/// returns the deleted entity.
///
/// On a handle [`with_coalescing`](Db::with_coalescing), a delete without a condition,
/// version or `return_old`, whose request carries no entity-type guard (an entity told
/// apart by its keys on a table without a type attribute), joins the concurrent puts and
/// deletes of its window in a `BatchWriteItem`, as [`Put`](crate::ops::Put) says.
#[must_use = "an operation does nothing until it is awaited"]
pub struct Delete<'a, E: Entity, R = NoReturn> {
    pub(crate) db: &'a Db<E::Table>,
    pub(crate) key: Key<E>,
    pub(crate) condition: Option<Node>,
    pub(crate) expected_version: Option<u64>,
    /// The started request (the item before the delete, when asked for).
    running: Running<'a, Result<Option<Item>, Error>>,
    _return: PhantomData<fn() -> R>,
}

impl<T: Table> Db<T> {
    /// Starts a delete of the item of `key`.
    pub fn delete<E: Entity<Table = T>>(&self, key: Key<E>) -> Delete<'_, E> {
        Delete {
            db: self,
            key,
            condition: None,
            expected_version: None,
            running: Running::default(),
            _return: PhantomData,
        }
    }
}

impl<'a, E: Entity, R> Delete<'a, E, R> {
    /// Adds a condition on the stored item (combined with AND).
    pub fn condition(mut self, condition: Condition<E>) -> Self {
        self.condition = and_condition(self.condition.take(), condition);
        self
    }

    /// Optimistic locking: deletes only if the stored version is `version`.
    pub fn expect_version(mut self, version: u64) -> Self {
        self.expected_version = Some(version);
        self
    }

    /// Returns the deleted entity (`None` when there was no item).
    pub fn return_old(self) -> Delete<'a, E, ReturnOld> {
        self.returning()
    }

    /// Checks the key and renders the guarded condition, with what the write pipeline's
    /// steps `held`.
    pub(crate) fn prepare(&self, held: Option<&Node>) -> Result<Rendered<E>, Error> {
        let key = Write::key(self)?;
        let guard = Guard { kind: WriteKind::Delete, expected_version: self.expected_version };
        Rendered::new(ExprBuilder::default(), key, guard, self.condition.as_ref(), held)
    }

    fn execute(self, want_old: bool) -> impl Future<Output = Result<Option<Item>, Error>> + Send {
        write::run(self, want_old)
    }

    /// The same delete, returning what `R2` says.
    fn returning<R2>(self) -> Delete<'a, E, R2> {
        Delete {
            db: self.db,
            key: self.key,
            condition: self.condition,
            expected_version: self.expected_version,
            running: Running::default(),
            _return: PhantomData,
        }
    }
}

impl<E: Entity, R> Write<E> for Delete<'_, E, R> {
    const DELETES: bool = true;
    /// The item deleted, when asked for.
    type Out = Option<Item>;
    type Done = ();

    fn db(&self) -> &Db<E::Table> {
        self.db
    }

    fn key(&self) -> Result<Key<E>, Error> {
        self.key.validate()?;
        check_expected_version::<E>(self.expected_version)?;
        Ok(self.key.clone())
    }

    fn change(&self) -> Result<Change<'_, E>, Error> {
        Ok(Change::Delete)
    }

    fn action(
        &self,
        held: Option<&Node>,
        _stored: Option<&Item>,
        _want: bool,
    ) -> Result<(ActionInfo, Action, ()), Error> {
        let write = self.prepare(held)?;
        let key = key_item(&write.key);
        Ok((info(&write), write.into_action(Kind::Delete(key)), ()))
    }

    async fn send_alone(
        &mut self,
        held: Option<&Node>,
        want_old: bool,
    ) -> Result<Option<Item>, Error> {
        let Rendered { key, guard, condition, names, values } = self.prepare(held)?;
        let db = self.db;
        let action = Action::delete(key_item(&key))
            .with_expressions(condition, names, values)
            .return_old(true);
        // A delete that returns the item it removed is sent alone (a batch returns nothing).
        if !want_old && crate::ops::batch::coalesced_write(db, E::NAME, &action).await {
            return Ok(None);
        }
        let request = action
            .delete_item(db)?
            .return_values(if want_old { ReturnValue::AllOld } else { ReturnValue::None })
            .set_return_consumed_capacity(db.capacity_mode());
        let result = retry::send(db, retry::Call::of(Op::DeleteItem, E::NAME), request).await;
        match result {
            Ok(out) => Ok(out.attributes.filter(|item| !item.is_empty())),
            Err(err) => Err(match err.into_service() {
                Err(e) => e,
                Ok(aws_sdk_dynamodb::Error::ConditionalCheckFailedException(e)) => {
                    guard.failure(&key, e.item)
                }
                Ok(other) => Error::service(Op::DeleteItem, other),
            }),
        }
    }

    fn finish(&mut self, (): (), stored: Option<Item>, want: bool) -> Result<Option<Item>, Error> {
        Ok(stored.filter(|_| want))
    }

    /// No item to delete: as the plain delete answers.
    fn absent(&self) -> Option<Result<Option<Item>, Error>> {
        Some(if self.condition.is_some() || self.expected_version.is_some() {
            Err(Error::NotFound { entity: E::NAME, key: self.key.to_string() })
        } else {
            Ok(None)
        })
    }
}

impl<'a, E: Entity> Delete<'a, E, NoReturn> {
    /// Sends the request.
    pub async fn send(self) -> Result<(), Error> {
        self.execute(false).await.map(|_| ())
    }
}

impl<'a, E: Entity> Delete<'a, E, ReturnOld> {
    /// Sends the request and returns the deleted entity, if there was one.
    pub async fn send(self) -> Result<Option<E>, Error> {
        self.execute(true).await?.map(from_item).transpose()
    }
}

startable!(writes
    ['a, E: Entity, R: Returns] Delete<'a, E, R> => Result<Option<Item>, Error>,
    |d| d.db.delete(d.key.clone()).returning(),
    |d| d.execute(R::WANT)
);
builder_future!(['a, E: Entity] Delete<'a, E, NoReturn> => Result<(), Error>, |r| r.map(|_| ()));
builder_future!(
    ['a, E: Entity] Delete<'a, E, ReturnOld> => Result<Option<E>, Error>,
    |r: Result<Option<Item>, Error>| r?.map(from_item).transpose()
);
