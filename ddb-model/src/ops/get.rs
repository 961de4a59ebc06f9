use super::{Running, key_item, retry};
use crate::db::Db;
use crate::error::Error;
use crate::key::Key;
use crate::model::{Entity, Table, is_expired};
use crate::ops::startable::startable;
use crate::stats::Op;

/// Reads one item by key. Made by `E::get(&db, ..)` or [`Db::get`]; `.await` it (or call
/// [`send`](Get::send)) for `Ok(None)` when there is no item.
///
/// An item of another entity type under the key is [`Error::WrongEntityType`], never a
/// wrong struct.
///
/// On a handle [`with_coalescing`](Db::with_coalescing), gets that start within the window
/// are gathered into one `BatchGetItem` (a separate one for consistent gets, whose
/// `ConsistentRead` is per table in a batch); a get alone in its window, and every get of a
/// dry run, is sent as a `GetItem`. Each get reads its own item from the batch, so its result
/// is what its own `GetItem` would give (absent, expired, another entity type, a decoding
/// error, a sealed entity opened). Unprocessed keys are sent again as every batch get does;
/// when the batch fails (throttled, a transport error) or the get that leads it is dropped,
/// each get sends its own `GetItem` and gets its own result or error.
#[must_use = "an operation does nothing until it is awaited"]
pub struct Get<'a, E: Entity> {
    db: &'a Db<E::Table>,
    key: Key<E>,
    consistent: bool,
    include_expired: bool,
    running: Running<'a, Result<Option<E>, Error>>,
}

impl<T: Table> Db<T> {
    /// Reads the item of `key`.
    pub fn get<E: Entity<Table = T>>(&self, key: Key<E>) -> Get<'_, E> {
        Get {
            db: self,
            key,
            consistent: false,
            include_expired: false,
            running: Running::default(),
        }
    }
}

impl<'a, E: Entity> Get<'a, E> {
    /// Strongly consistent read (twice the read capacity; not available on indexes).
    pub fn consistent(mut self) -> Self {
        self.consistent = true;
        self
    }

    /// Returns the item even when its expiry time (`#[entity(ttl = ..)]`) has passed but the
    /// service has not deleted it yet (it does so within days). By default such an item
    /// reads as absent: its expiry is less than the handle's clock in whole seconds. No
    /// effect on an entity without an expiry field.
    pub fn include_expired(mut self) -> Self {
        self.include_expired = true;
        self
    }

    /// Sends the request.
    pub async fn send(self) -> Result<Option<E>, Error> {
        self.key.validate()?;
        self.db.can_seal::<E>()?;
        // A re-keyed entity mid-way reads the copy its phase reads.
        let moved = super::rekey::phase_key(self.db, &self.key)?;
        let key = key_item(moved.as_ref().unwrap_or(&self.key));
        crate::ops::tenant::key(self.db, Op::GetItem, &key)?;
        let gathered = match crate::ops::dry::current() {
            None => {
                crate::ops::batch::coalesced_get(self.db, &self.key, &key, self.consistent).await
            }
            Some(_) => None,
        };
        let mut item = match gathered {
            Some(item) => item,
            None => {
                let request = self
                    .db
                    .client()
                    .get_item()
                    .table_name(self.db.table_name())
                    .set_key(Some(key))
                    .set_consistent_read(self.consistent.then_some(true))
                    .set_return_consumed_capacity(self.db.capacity_mode());
                retry::send(self.db, retry::Call::of(Op::GetItem, E::NAME), request).await?.item
            }
        };
        if !self.include_expired
            && let Some((attr, now)) = self.db.expiry_cutoff::<E>()
            && item.as_ref().is_some_and(|i| is_expired(i, attr, now))
        {
            item = None;
        }
        item.map(|item| self.db.open::<E>(item)).transpose()
    }
}

startable!(
    ['a, E: Entity] Get<'a, E> => Result<Option<E>, Error>,
    |get| get.db.get(Key::from_parts(String::new(), None)),
    send
);
