//! Each write of a batch converted and checked when it is added: the item or key, its key
//! as the batch compares them, and the refusals (unique constraints, rows without a key).

use aws_sdk_dynamodb::types::{DeleteRequest, PutRequest, WriteRequest};

use super::BatchWrite;
use crate::error::{BatchAction, Error};
use crate::item::{Item, MAX_ITEM_BYTES, item_size};
use crate::model::{Entity, Stamp, Table, to_item_keyed};
use crate::ops::batch::keys::RawKey;

/// One write of a batch, converted and checked.
pub(in crate::ops::batch) struct WriteSpec {
    pub(in crate::ops::batch) action: BatchAction,
    pub(in crate::ops::batch) entity: &'static str,
    pub(in crate::ops::batch) raw: RawKey,
    pub(in crate::ops::batch) request: WriteRequest,
}

impl WriteSpec {
    pub(in crate::ops::batch) fn put(
        entity: &'static str,
        raw: RawKey,
        item: Item,
    ) -> Result<Self, Error> {
        let put = PutRequest::builder().set_item(Some(item)).build().map_err(Error::build)?;
        let request = WriteRequest::builder().put_request(put).build();
        Ok(WriteSpec { action: BatchAction::Put, entity, raw, request })
    }

    pub(in crate::ops::batch) fn delete(
        entity: &'static str,
        raw: RawKey,
        key: Item,
    ) -> Result<Self, Error> {
        let delete = DeleteRequest::builder().set_key(Some(key)).build().map_err(Error::build)?;
        let request = WriteRequest::builder().delete_request(delete).build();
        Ok(WriteSpec { action: BatchAction::Delete, entity, raw, request })
    }
}

impl<'a, T: Table> BatchWrite<'a, T> {
    pub(super) fn put_spec<E: Entity<Table = T>>(
        &self,
        entity: &E,
        version: Option<u64>,
        stamp: Stamp,
    ) -> Result<WriteSpec, Error> {
        let key = entity.key();
        let item = self.db.seal::<E>(to_item_keyed(entity, &key, version, Some(stamp))?)?;
        WriteSpec::put(E::NAME, RawKey::of(&key), item)
    }

    /// Adds a put of an item rendered by the library itself (a tree's bookkeeping rows):
    /// refused when it has no key of this table or is larger than DynamoDB's item limit.
    pub(crate) fn put_raw(mut self, entity: &'static str, item: Item) -> Self {
        let size = item_size(&item);
        let write = if size > MAX_ITEM_BYTES {
            Err(Error::ItemTooLarge { entity, size, max: MAX_ITEM_BYTES })
        } else {
            RawKey::from_item::<T>(&item)
                .ok_or(row_without_key(entity))
                .and_then(|raw| WriteSpec::put(entity, raw, item))
        };
        self.push(write);
        self
    }

    /// Adds a delete of the item whose key is `key` (a key of this table: its partition key
    /// and sort key attributes), whatever its entity type.
    pub(crate) fn delete_raw(mut self, entity: &'static str, key: Item) -> Self {
        let write = RawKey::from_item::<T>(&key)
            .ok_or(row_without_key(entity))
            .and_then(|raw| WriteSpec::delete(entity, raw, key));
        self.push(write);
        self
    }
}

/// `Ok` for an entity without unique constraints; else the refusal of `operation`, which
/// cannot keep them (see [`ops::unique`](crate::ops::unique)).
pub(super) fn unique_allowed<E: Entity>(operation: &'static str) -> Result<(), Error> {
    if E::UNIQUES.is_empty() {
        return Ok(());
    }
    let problem = crate::error::RequestProblem::UniqueUnenforced { entity: E::NAME, operation };
    Err(Error::InvalidRequest { path: String::new(), problem })
}

/// A row the library rendered without a key of the table: a bug.
fn row_without_key(entity: &'static str) -> Error {
    Error::Internal { problem: crate::error::InternalProblem::RowWithoutKey { entity } }
}
