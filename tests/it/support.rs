//! Test support: isolated tables, raw items, whole-table snapshots.

use std::collections::HashMap;

use ddb_model::aws_sdk_dynamodb::config::retry::RetryPartition;
use ddb_model::aws_sdk_dynamodb::types::AttributeValue;
use ddb_model::{Db, Item, Table, local};

/// A fresh table laid out as `T`, on the embedded engine or on `DDB_ENDPOINT`.
pub async fn db<T: Table>() -> Db<T> {
    match local::isolated_db::<T>().await {
        Ok(db) => db,
        Err(e) => panic!("cannot create a test table: {e}"),
    }
}

pub fn s(v: &str) -> AttributeValue {
    AttributeValue::S(v.to_owned())
}

pub fn n(v: impl ToString) -> AttributeValue {
    AttributeValue::N(v.to_string())
}

/// The raw stored item under (pk, sk), read with the SDK directly.
pub async fn raw<T: Table>(db: &Db<T>, pk: &str, sk: &str) -> Option<Item> {
    let mut key = HashMap::new();
    key.insert(T::PK.to_owned(), s(pk));
    if let Some(attr) = T::SK {
        key.insert(attr.to_owned(), s(sk));
    }
    db.client()
        .get_item()
        .table_name(db.table_name())
        .set_key(Some(key))
        .consistent_read(true)
        .send()
        .await
        .expect("raw get")
        .item
}

/// Writes a raw item with the SDK directly (to plant foreign or corrupt items).
pub async fn put_raw<T: Table>(db: &Db<T>, item: Item) {
    db.client()
        .put_item()
        .table_name(db.table_name())
        .set_item(Some(item))
        .send()
        .await
        .expect("raw put");
}

/// Every item of the table, sorted by key, as comparable text. Used to assert that a
/// rejected operation changed nothing.
pub async fn snapshot<T: Table>(db: &Db<T>) -> Vec<String> {
    let mut items = Vec::new();
    let mut start = None;
    loop {
        let out = db
            .client()
            .scan()
            .table_name(db.table_name())
            .consistent_read(true)
            .set_exclusive_start_key(start)
            .send()
            .await
            .expect("scan");
        for item in out.items() {
            let mut fields: Vec<String> =
                item.iter().map(|(k, v)| format!("{k}={}", canonical(v))).collect();
            fields.sort();
            items.push(fields.join(", "));
        }
        start = out.last_evaluated_key;
        if start.is_none() {
            break;
        }
    }
    items.sort();
    items
}

/// A value as text, map entries and set elements in order (a `HashMap` prints in hash
/// order, which differs between two reads of the same item).
fn canonical(v: &AttributeValue) -> String {
    match v {
        AttributeValue::M(m) => {
            let mut entries: Vec<String> =
                m.iter().map(|(k, v)| format!("{k:?}: {}", canonical(v))).collect();
            entries.sort();
            format!("M{{{}}}", entries.join(", "))
        }
        AttributeValue::L(l) => {
            format!("L[{}]", l.iter().map(canonical).collect::<Vec<_>>().join(", "))
        }
        AttributeValue::Ss(s) | AttributeValue::Ns(s) => {
            let mut s = s.clone();
            s.sort();
            format!("{s:?}")
        }
        other => format!("{other:?}"),
    }
}

/// Runs `f` and asserts it sent no request through `db`.
#[macro_export]
macro_rules! no_request {
    ($db:expr, $f:expr) => {{
        let before = $db.requests();
        let out = $f;
        assert_eq!(($db.requests() - before).total(), 0, "a rejected input must not be sent");
        out
    }};
}

/// A retry partition of its own, for a client that injects faults. The SDK gates its retries
/// by a token bucket shared by every client of one partition (by default every DynamoDB
/// client of the process): a test that injects many faults drains it, and another test's
/// SDK then stops retrying (a lost response not sent again, fewer attempts than configured).
/// In a partition of its own, a faulty client cannot starve the other tests.
pub fn own_retry_partition() -> RetryPartition {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    RetryPartition::new(format!("ddb-model-test-{}", NEXT.fetch_add(1, Ordering::Relaxed)))
}

/// The keys (partition and sort key) of every item of the table, sorted: what a rejected or
/// undone operation must leave as it was, whatever attributes (revisions) changed.
pub async fn snapshot_keys<T: Table>(db: &Db<T>) -> Vec<String> {
    let text = |item: &Item, attr: Option<&str>| match attr.and_then(|a| item.get(a)) {
        Some(AttributeValue::S(s)) => s.clone(),
        Some(other) => format!("{other:?}"),
        None => String::new(),
    };
    let mut keys = Vec::new();
    let mut start = None;
    loop {
        let out = db
            .client()
            .scan()
            .table_name(db.table_name())
            .consistent_read(true)
            .set_exclusive_start_key(start)
            .send()
            .await
            .expect("scan");
        for item in out.items() {
            keys.push(format!("{} | {}", text(item, Some(T::PK)), text(item, T::SK)));
        }
        start = out.last_evaluated_key;
        if start.is_none() {
            break;
        }
    }
    keys.sort();
    keys
}

/// Deletes the raw item under (pk, sk) with the SDK directly.
pub async fn delete_raw<T: Table>(db: &Db<T>, pk: &str, sk: &str) {
    let mut key = HashMap::new();
    key.insert(T::PK.to_owned(), s(pk));
    if let Some(attr) = T::SK {
        key.insert(attr.to_owned(), s(sk));
    }
    db.client()
        .delete_item()
        .table_name(db.table_name())
        .set_key(Some(key))
        .send()
        .await
        .expect("raw delete");
}
