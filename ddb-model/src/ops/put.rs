use super::action::{Action, Kind};
use super::retry::{self, SendError};
use super::transact::{ActionInfo, info};
use super::unique::Change;
use super::write::{self, Write};
use super::{Guard, Rendered, Running, WriteKind, and_condition};
use crate::db::Db;
use crate::error::Error;
use crate::error::RequestProblem;
use crate::expr::{Condition, ExprBuilder, Node};
use crate::item::Item;
use crate::key::Key;
use crate::model::{Entity, Stamp, Table, to_item_keyed, to_item_with};
use crate::ops::startable::startable;
use crate::stats::Op;

/// The entity a write reads from: shared, or exclusive so that the write can store the new
/// version in it (optimistic locking).
pub enum Target<'a, E> {
    /// The write leaves the value as it is.
    Shared(&'a E),
    /// The write sets the value's version field to the version it stored.
    Exclusive(&'a mut E),
}

impl<'a, E> From<&'a E> for Target<'a, E> {
    fn from(e: &'a E) -> Self {
        Target::Shared(e)
    }
}

impl<'a, E> From<&'a mut E> for Target<'a, E> {
    fn from(e: &'a mut E) -> Self {
        Target::Exclusive(e)
    }
}

impl<E> Target<'_, E> {
    pub(crate) fn get(&self) -> &E {
        match self {
            Target::Shared(e) => e,
            Target::Exclusive(e) => e,
        }
    }
}

impl<E: Entity> Target<'_, E> {
    /// After a successful write: an exclusive target takes the version and the timestamps
    /// the write stored.
    pub(crate) fn written(&mut self, version: Option<u64>, stamp: Option<Stamp>) {
        if let Target::Exclusive(e) = self {
            if let Some(v) = version {
                e.set_version(v);
            }
            if let Some(stamp) = stamp {
                e.set_stamp(stamp);
            }
        }
    }
}

/// Writes a whole item: `create` (no item may exist), `put` (insert or overwrite an item of
/// the same entity type) or `replace` (an item must exist). Made by `entity.create(&db)`,
/// `entity.put(&db)`, `entity.replace(&db)` or the [`Db`] methods of the same names.
///
/// With a version field, the write requires the stored version to be the entity's version
/// and stores the next one; through `&mut` the entity's field is updated afterwards.
///
/// With timestamp fields (`#[entity(created_at = .., updated_at = ..)]`), `updated_at` is
/// set from the handle's clock; `created_at` too for `create`, while `put` and `replace`
/// write the value's own `created_at` (as read) and set it only when it is unset (a value
/// built without a time): a whole-item write cannot read the stored one. Through `&mut`
/// the fields hold the stored times afterwards.
///
/// On a handle [`with_coalescing`](Db::with_coalescing), a `put` whose request would carry
/// no condition expression (an entity told apart by its keys on a table without a type
/// attribute, with no version field, unique fields or condition; not a `create` or
/// `replace`) joins the concurrent puts and deletes of its window in a `BatchWriteItem`, on
/// a handle without an interceptor and outside a dry run. Its result is its own: a refusal
/// before sending is its error alone, and when the batch did not apply it (the request
/// failed, or the item stayed unprocessed) the put is sent alone as a `PutItem`.
#[must_use = "an operation does nothing until it is awaited"]
pub struct Put<'a, E: Entity> {
    pub(crate) db: &'a Db<E::Table>,
    /// `None` only in a builder whose settings a started request took.
    pub(crate) target: Option<Target<'a, E>>,
    pub(crate) kind: WriteKind,
    pub(crate) condition: Option<Node>,
    /// What the timestamp fields are set from.
    stamp: StampFrom,
    running: Running<'a, Result<(), Error>>,
}

impl<T: Table> Db<T> {
    /// Writes `entity`, inserting it or overwriting an item of the same entity type.
    pub fn put<'a, E: Entity<Table = T>>(&'a self, entity: impl Into<Target<'a, E>>) -> Put<'a, E> {
        Put::new(self, entity.into(), WriteKind::Put)
    }

    /// Writes `entity` if no item exists under its key; otherwise fails with
    /// [`Error::AlreadyExists`] carrying the stored item.
    pub fn create<'a, E: Entity<Table = T>>(
        &'a self,
        entity: impl Into<Target<'a, E>>,
    ) -> Put<'a, E> {
        Put::new(self, entity.into(), WriteKind::Create)
    }

    /// Overwrites the stored item of `entity`'s key; fails with [`Error::NotFound`] when
    /// there is none.
    pub fn replace<'a, E: Entity<Table = T>>(
        &'a self,
        entity: impl Into<Target<'a, E>>,
    ) -> Put<'a, E> {
        Put::new(self, entity.into(), WriteKind::Replace)
    }
}

impl<'a, E: Entity> Put<'a, E> {
    pub(crate) fn new(db: &'a Db<E::Table>, mut target: Target<'a, E>, kind: WriteKind) -> Self {
        // Generated ids before anything renders the keys they are part of.
        if let (Target::Exclusive(e), WriteKind::Create | WriteKind::Put) = (&mut target, kind) {
            e.generate_ids();
        }
        Put {
            db,
            target: Some(target),
            kind,
            condition: None,
            stamp: StampFrom::Clock,
            running: Running::default(),
        }
    }

    /// The entity written; an error in a builder whose request was already started.
    pub(crate) fn target(&self) -> Result<&Target<'a, E>, Error> {
        self.target.as_ref().ok_or_else(already_sent)
    }

    /// Adds a condition on the stored item (combined with AND); when it does not hold the
    /// write fails with [`Error::ConditionFailed`] and writes nothing.
    pub fn condition(mut self, condition: Condition<E>) -> Self {
        self.condition = and_condition(self.condition.take(), condition);
        self
    }

    /// Sets the timestamp fields from `stamp` rather than from the clock when rendered: a
    /// layer that renders the write again on a retry (a tree insert) stores one time.
    pub(crate) fn at(mut self, stamp: Stamp) -> Self {
        self.stamp = StampFrom::At(stamp);
        self
    }

    /// Writes the timestamp fields as the value holds them: a layer that moves an item
    /// without changing its fields (a tree move) keeps its times.
    pub(crate) fn keeping_times(mut self) -> Self {
        self.stamp = StampFrom::Held;
        self
    }

    /// Renders the write: the item (with its next version) and the guarded condition, with
    /// what the write pipeline's steps `held`.
    fn prepare(&self, held: Option<&Node>) -> Result<PreparedPut<E>, Error> {
        let entity = self.target()?.get();
        let key = entity.key();
        let (expected, next) = next_version::<E>(entity.version())?;
        let stamp = match self.stamp {
            StampFrom::Clock => Some(self.db.stamp(self.kind == WriteKind::Create)),
            StampFrom::At(stamp) => Some(stamp),
            StampFrom::Held => None,
        };
        let item = self.db.seal::<E>(to_item_keyed(entity, &key, next, stamp)?)?;
        let guard = Guard {
            kind: self.kind,
            expected_version: if self.kind == WriteKind::Create { None } else { expected },
        };
        let condition = self.condition.as_ref();
        let write = Rendered::new(ExprBuilder::default(), key, guard, condition, held)?;
        Ok(PreparedPut { write, item, next_version: next, stamp })
    }

    /// Sends the request.
    pub fn send(self) -> impl Future<Output = Result<(), Error>> + Send + 'a {
        write::run(self, false)
    }
}

impl<'a, E: Entity> Write<E> for Put<'a, E> {
    type Out = ();
    /// The version and the time stored, for an exclusive target.
    type Done = (Option<u64>, Option<Stamp>);

    fn db(&self) -> &Db<E::Table> {
        self.db
    }

    fn key(&self) -> Result<Key<E>, Error> {
        self.db.can_seal::<E>()?;
        let key = self.target()?.get().key();
        key.validate()?;
        Ok(key)
    }

    fn change(&self) -> Result<Change<'_, E>, Error> {
        // The plaintext item, for the unique constraints' values (a sealed item is sealed
        // in `prepare`).
        let entity = self.target()?.get();
        let item = to_item_keyed(entity, &entity.key(), None, None)?;
        Ok(Change::Put { item, creating: self.kind == WriteKind::Create })
    }

    fn action(
        &self,
        held: Option<&Node>,
        _stored: Option<&Item>,
        _want: bool,
    ) -> Result<(ActionInfo, Action, Self::Done), Error> {
        let PreparedPut { write, item, next_version, stamp } = self.prepare(held)?;
        Ok((info(&write), write.into_action(Kind::Put(item)), (next_version, stamp)))
    }

    async fn send_alone(&mut self, held: Option<&Node>, _want: bool) -> Result<(), Error> {
        let PreparedPut { write, item, next_version: next, stamp } = self.prepare(held)?;
        let Rendered { key, guard, condition, names, values } = write;
        let db = self.db;
        let action = Action::put(item).with_expressions(condition, names, values).return_old(true);
        if crate::ops::batch::coalesced_write(db, E::NAME, &action).await {
            return self.finish((next, stamp), None, false);
        }
        let request = action.put_item(db)?.set_return_consumed_capacity(db.capacity_mode());
        let result = retry::send(db, retry::Call::of(Op::PutItem, E::NAME), request).await;
        match result {
            Ok(_) => self.finish((next, stamp), None, false),
            Err(SendError::Typed(e)) => Err(e),
            Err(SendError::Service { op, err, attempts }) => match err {
                aws_sdk_dynamodb::Error::ConditionalCheckFailedException(e) => {
                    // When the SDK retries a request whose response was lost, the guard fails
                    // against the item the first attempt stored. If the request was retried
                    // and the stored item is exactly what it stores, the write was applied.
                    if attempts > 1
                        && e.item.is_some()
                        && e.item == to_item_with(self.target()?.get(), next, stamp).ok()
                    {
                        return self.finish((next, stamp), None, false);
                    }
                    Err(guard.failure(&key, e.item))
                }
                other => Err(Error::service(op, other)),
            },
        }
    }

    fn finish(
        &mut self,
        (version, stamp): Self::Done,
        _stored: Option<Item>,
        _want: bool,
    ) -> Result<(), Error> {
        if let Some(target) = self.target.as_mut() {
            target.written(version, stamp);
        }
        Ok(())
    }

    fn on_commit<'b>(self, (version, stamp): Self::Done) -> Option<Box<dyn FnOnce() + Send + 'b>>
    where
        Self: 'b,
    {
        match self.target {
            Some(mut target @ Target::Exclusive(_)) if version.is_some() || E::TIMESTAMPS.any() => {
                Some(Box::new(move || target.written(version, stamp)))
            }
            _ => None,
        }
    }
}

/// A whole-item write rendered for the wire.
struct PreparedPut<E> {
    write: Rendered<E>,
    item: Item,
    /// The version the item stores, to set on an exclusive target after the write.
    next_version: Option<u64>,
    /// The time the item's timestamp fields were set from, to set on an exclusive target.
    stamp: Option<Stamp>,
}

/// Where a whole-item write takes its timestamps from.
#[derive(Debug, Clone, Copy)]
enum StampFrom {
    /// The handle's clock, read when the write is rendered.
    Clock,
    /// A time the caller fixed (a write rendered again on a retry stores one time).
    At(Stamp),
    /// The value's own fields.
    Held,
}

fn already_sent() -> Error {
    Error::InvalidRequest { path: String::new(), problem: RequestProblem::AlreadySent }
}

/// `(expected stored version, version to write)` for an entity whose version field holds
/// `current`.
pub(crate) fn next_version<E: Entity>(
    current: Option<u64>,
) -> Result<(Option<u64>, Option<u64>), Error> {
    match (E::VERSION, current) {
        (Some(def), Some(v)) => match v.checked_add(1).filter(|n| *n <= def.max) {
            Some(next) => Ok((Some(v), Some(next))),
            None => Err(Error::InvalidRequest {
                path: def.attr.to_owned(),
                problem: RequestProblem::VersionExhausted {
                    entity: E::NAME,
                    version: v,
                    max: def.max,
                },
            }),
        },
        _ => Ok((None, None)),
    }
}

startable!(writes
    ['a, E: Entity] Put<'a, E> => Result<(), Error>,
    |p| Put {
        db: p.db,
        target: None,
        kind: p.kind,
        condition: None,
        stamp: p.stamp,
        running: Running::default(),
    },
    send
);
