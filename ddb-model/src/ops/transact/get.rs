//! [`TransactGet`]: `TransactGetItems`.

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};

use aws_sdk_dynamodb::types::{Get, TransactGetItem};

use super::reason::ActionInfo;
use super::write::canceled;
use super::{MAX_TRANSACTION_ACTIONS, TransactionProblem};
use crate::db::{Db, Sealer};
use crate::error::Error;
use crate::item::Item;
use crate::key::Key;
use crate::model::{Entity, Table};
use crate::ops::Running;
use crate::ops::slot::Slot;
use crate::ops::startable::startable;
use crate::stats::Op;

/// A strongly consistent read of several items, of any entity types of one table, at one
/// point in time: one `TransactGetItems` request. Made by [`Db::transact_get`].
///
/// [`get`](TransactGet::get) adds a key and returns a typed [`Slot`]; after `.await`, the
/// output reads each slot as its entity. Unlike a batch get, no write can come between the
/// reads: a transaction that wrote two of the items is seen entirely or not at all.
///
/// At most [`MAX_TRANSACTION_ACTIONS`](crate::ops::MAX_TRANSACTION_ACTIONS) distinct keys
/// ([`Error::InvalidTransaction`] otherwise, before sending); a key added twice is read once.
/// Without keys, nothing is sent. A read that conflicts with a concurrent write transaction
/// is [`Error::TransactionCanceled`] with
/// [`CancelReason::TransactionConflict`](crate::error::CancelReason::TransactionConflict).
///
/// ```
/// use ddb_model::prelude::*;
/// use serde::{Deserialize, Serialize};
///
/// #[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
/// #[entity(pk = "ACCOUNT#<id>", sk = "ACCOUNT")]
/// struct Account { id: String, balance: i64 }
///
/// #[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
/// #[entity(pk = "ACCOUNT#<account>", sk = "LIMIT")]
/// struct Limit { account: String, daily: i64 }
///
/// # #[cfg(feature = "local")]
/// # #[tokio::main]
/// # async fn main() -> Result<(), Error> {
/// # let db = ddb_model::local::isolated_db::<ddb_model::DefaultTable>().await?;
/// let ann = Account { id: "ann".into(), balance: 100 };
/// db.transaction().create(&ann).create(&Limit { account: "ann".into(), daily: 50 }).await?;
///
/// let mut read = db.transact_get();
/// assert!(read.is_empty());
/// let account = read.get(Account::key("ann"));
/// let limit = read.get(Limit::key("ann"));
/// let missing = read.get(Account::key("bob"));
/// read.get(Account::key("ann")); // read once
/// assert_eq!(read.len(), 3);
/// let out = read.await?;
/// assert_eq!(out.get(&account)?, Some(ann.clone()));
/// assert_eq!(out.get(&limit)?.map(|l| l.daily), Some(50));
/// assert_eq!(out.get(&missing)?, None);
/// assert_eq!(out.items().iter().filter(|item| item.is_some()).count(), 2);
/// // Slots in a collection; `send` is the same as `.await`.
/// let mut read = db.transact_get();
/// let slots: Vec<_> = ["ann", "bob"].into_iter().map(|id| read.get(Account::key(id))).collect();
/// let out = read.send().await?;
/// let accounts: Vec<Option<Account>> =
///     slots.iter().map(|s| out.get(s)).collect::<Result<_, _>>()?;
/// assert_eq!(accounts, [Some(ann), None]);
/// # Ok(())
/// # }
/// # #[cfg(not(feature = "local"))]
/// # fn main() {}
/// ```
#[must_use = "a transactional get does nothing until it is awaited"]
pub struct TransactGet<'a, T: Table> {
    db: &'a Db<T>,
    id: u64,
    /// The distinct keys, in the order they were first added.
    keys: Vec<ActionInfo>,
    index: HashMap<(String, Option<String>), usize>,
    /// The first invalid key, reported when the read is sent.
    error: Option<Error>,
    /// Calls of `get` so far.
    calls: usize,
    running: Running<'a, Result<TransactGetOutput, Error>>,
}

/// The items a [`TransactGet`] read, to be read through its [`Slot`]s. Example: [`TransactGet`].
#[derive(Debug)]
pub struct TransactGetOutput {
    tx: u64,
    items: Vec<Option<Item>>,
    /// Opens sealed entities' items.
    sealer: Sealer,
}

impl TransactGetOutput {
    /// The entity stored under the slot's key (`None` when there is no item).
    ///
    /// An item of another entity type is [`Error::WrongEntityType`]; a slot of another
    /// transactional get is [`Error::InvalidTransaction`]. Example: [`TransactGet`].
    pub fn get<E: Entity>(&self, slot: &Slot<E>) -> Result<Option<E>, Error> {
        if slot.owner != self.tx {
            return Err(Error::InvalidTransaction { problem: TransactionProblem::ForeignSlot });
        }
        match self.items.get(slot.position) {
            Some(Some(item)) => self.sealer.open(item.clone()).map(Some),
            _ => Ok(None),
        }
    }

    /// The raw items, in the order their keys were first added (`None` where there is no
    /// item). Example: [`TransactGet`].
    pub fn items(&self) -> &[Option<Item>] {
        &self.items
    }
}

impl<T: Table> Db<T> {
    /// Starts a transactional (atomic, strongly consistent) read of several items; see
    /// [`TransactGet`].
    pub fn transact_get(&self) -> TransactGet<'_, T> {
        static IDS: AtomicU64 = AtomicU64::new(0);
        TransactGet {
            db: self,
            id: IDS.fetch_add(1, Ordering::Relaxed),
            keys: Vec::new(),
            index: HashMap::new(),
            error: None,
            calls: 0,
            running: Running::default(),
        }
    }
}

impl<'a, T: Table> TransactGet<'a, T> {
    /// Adds `key` to the read and returns the slot to read its entity from the output.
    /// Example: [`TransactGet`].
    pub fn get<E: Entity<Table = T>>(&mut self, key: Key<E>) -> Slot<E> {
        let call = self.calls;
        self.calls += 1;
        let tx = self.id;
        let slot = |index| Slot::new(tx, index);
        let refused = |()| {
            crate::ops::rekey::refuse_in::<E, T>(
                self.db,
                "a transactional get",
                crate::ops::rekey::READS_OLD,
            )
        };
        if let Err(e) = key.validate().and_then(|()| self.db.can_seal::<E>()).and_then(refused) {
            if self.error.is_none() {
                self.error = Some(Error::InvalidAction { action: call, source: Box::new(e) });
            }
            return slot(usize::MAX);
        }
        let lookup = (key.pk().to_owned(), key.sk().map(str::to_owned));
        if let Some(&index) = self.index.get(&lookup) {
            return slot(index);
        }
        let index = self.keys.len();
        self.index.insert(lookup.clone(), index);
        self.keys.push(ActionInfo {
            entity: E::NAME,
            pk: lookup.0,
            sk: lookup.1,
            explain: None,
            unique: None,
        });
        slot(index)
    }

    /// The number of distinct keys added so far. Example: [`TransactGet`].
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// True when no key was added (sending it does nothing). Example: [`TransactGet`].
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Checks the keys and sends the read: one `TransactGetItems` request (none without
    /// keys). Example: [`TransactGet`].
    pub async fn send(self) -> Result<TransactGetOutput, Error> {
        let TransactGet { db, id, keys, error, .. } = self;
        if let Some(error) = error {
            return Err(error);
        }
        if keys.len() > MAX_TRANSACTION_ACTIONS {
            return Err(Error::InvalidTransaction {
                problem: TransactionProblem::TooManyActions {
                    actions: keys.len(),
                    max: MAX_TRANSACTION_ACTIONS,
                },
            });
        }
        if keys.is_empty() {
            return Ok(TransactGetOutput { tx: id, items: Vec::new(), sealer: Sealer::default() });
        }
        let mut items = Vec::with_capacity(keys.len());
        for info in &keys {
            let mut key = Item::with_capacity(2);
            key.insert(
                <T as Table>::PK.to_owned(),
                aws_sdk_dynamodb::types::AttributeValue::S(info.pk.clone()),
            );
            if let (Some(attr), Some(sk)) = (<T as Table>::SK, &info.sk) {
                key.insert(attr.to_owned(), aws_sdk_dynamodb::types::AttributeValue::S(sk.clone()));
            }
            crate::ops::tenant::key(db, Op::TransactGetItems, &key)?;
            let get = Get::builder()
                .table_name(db.table_name())
                .set_key(Some(key))
                .build()
                .map_err(Error::build)?;
            items.push(TransactGetItem::builder().get(get).build());
        }

        let request = db
            .client()
            .transact_get_items()
            .set_transact_items(Some(items))
            .set_return_consumed_capacity(db.capacity_mode());
        let result = crate::ops::retry::send(db, Op::TransactGetItems, request).await;
        match result {
            Ok(out) => {
                let responses = out.responses.unwrap_or_default();
                if responses.len() != keys.len() {
                    return Err(Error::CorruptItem {
                        entity: keys.first().map_or("", |k| k.entity),
                        key: String::new(),
                        reason: crate::error::CorruptReason::ResponseCount {
                            responses: responses.len(),
                            keys: keys.len(),
                        },
                    });
                }
                let items =
                    responses.into_iter().map(|r| r.item.filter(|i| !i.is_empty())).collect();
                Ok(TransactGetOutput { tx: id, items, sealer: db.sealer() })
            }
            Err(err) => Err(match err.into_service() {
                Err(e) => e,
                Ok(aws_sdk_dynamodb::Error::TransactionCanceledException(e)) => canceled(e, &keys),
                Ok(other) => Error::service(Op::TransactGetItems, other),
            }),
        }
    }
}

startable!(
    ['a, T: Table] TransactGet<'a, T> => Result<TransactGetOutput, Error>,
    |t| t.db.transact_get(),
    send
);

impl<T: Table> fmt::Debug for TransactGet<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let keys: Vec<String> =
            self.keys.iter().map(|k| format!("`{}` {}", k.entity, k.key_text())).collect();
        f.debug_struct("TransactGet")
            .field("table", &self.db.table_name())
            .field("keys", &keys)
            .finish()
    }
}
