//! Sharded degree counters: a node's count spread over shard items in partitions of their
//! own, so that concurrent links to one popular node write to many partitions instead of one.
//!
//! The counter of node `(pk, sk)` sharded `n` ways is the node item's own counter attribute
//! (the *base*: what an unsharded counter counted before it was sharded, 0 for a new node)
//! plus the same attribute on the shard items `(pk#SHARD#0, sk)` .. `(pk#SHARD#n-1, sk)`.
//! An edge's counter move goes to the shard that the *other* endpoint's key text hashes to
//! (FNV-1a, stable across processes and versions), so the link and the unlink of one edge
//! move the same shard: without a base, every shard holds the number of edges hashed to it
//! and never goes below zero. A count reads the node item and every shard in one consistent
//! `BatchGetItem` and sums them.

use aws_sdk_dynamodb::types::AttributeValue;

use super::CounterRef;
use super::keys::check_type;
use crate::db::Db;
use crate::error::{CorruptReason as Why, Error};
use crate::item::Item;
use crate::key::Key;
use crate::model::{Entity, Table, key_display, type_attr};
use crate::ops::MAX_BATCH_GET_KEYS;

/// The most shards a counter can have: a count reads the node item and every shard in one
/// `BatchGetItem`, of at most 100 keys.
///
/// ```
/// assert_eq!(ddb_model::edge::MAX_SHARDS, 99);
/// ```
pub const MAX_SHARDS: u16 = (MAX_BATCH_GET_KEYS - 1) as u16;

/// The shard an edge whose other endpoint has key text `other` counts in (of `shards`):
/// FNV-1a of the text, modulo the number of shards. Stable: it never changes between
/// processes or versions, since the unlink of an edge must move the shard its link moved.
pub(crate) fn shard_of(other: &str, shards: u16) -> u16 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in other.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    let shards = u64::from(shards.max(1));
    u16::try_from(hash % shards).unwrap_or(0)
}

/// The partition key of shard `n` of the node partition `pk`.
pub(crate) fn shard_pk(pk: &str, n: u16) -> String {
    format!("{pk}#SHARD#{n}")
}

/// The entity type stored on the shard items of node entity `entity`.
pub(crate) fn shard_type(entity: &str) -> String {
    format!("{entity}~shard")
}

/// Checks that the keys of every shard of node key `key` are within the limits (the longest
/// is the last shard's).
pub(crate) fn check_shard_keys<N: Entity>(key: &Key<N>, shards: u16) -> Result<(), Error> {
    let last = shard_pk(key.pk(), shards.saturating_sub(1));
    Key::<N>::from_parts(last, key.sk().map(str::to_owned)).validate()
}

impl CounterRef {
    /// The counter on the shard that the edge to (or from) `other` moves; an unsharded
    /// counter as it is.
    pub(crate) fn for_edge(&self, other: &str) -> CounterRef {
        if self.shards < 2 {
            return self.clone();
        }
        let n = shard_of(other, self.shards);
        CounterRef { pk: shard_pk(&self.pk, n), shard: Some(n), ..self.clone() }
    }
}

/// The counter attribute of a counter item (0 when it is absent).
pub(super) fn number(counter: &CounterRef, item: &Item, pk: &str) -> Result<i128, Error> {
    let corrupt = |reason| Error::CorruptItem {
        entity: counter.entity,
        key: key_display(Some(pk), counter.sk.as_deref()),
        reason,
    };
    match item.get(counter.attr) {
        None => Ok(0),
        Some(AttributeValue::N(n)) => n
            .parse::<i128>()
            .map_err(|_| corrupt(Why::NotACount { attribute: counter.attr, value: n.clone() })),
        Some(_) => Err(corrupt(Why::NotANumber { attribute: counter.attr })),
    }
}

/// Reads a sharded counter: the node item's counter (the base, 0 when the node item or the
/// attribute is absent) plus every shard's, in one consistent `BatchGetItem` (unprocessed
/// keys sent again with the batch policy). `E` is the edge the counter belongs to.
pub(crate) async fn read_sharded<E: Entity>(
    db: &Db<E::Table>,
    counter: &CounterRef,
) -> Result<u64, Error> {
    let mut batch = db.batch_read().consistent();
    let node = batch.get(Key::<E>::from_parts(counter.pk.clone(), counter.sk.clone()));
    let shards: Vec<_> = (0..counter.shards)
        .map(|n| {
            let key = Key::<E>::from_parts(shard_pk(&counter.pk, n), counter.sk.clone());
            (n, batch.get(key))
        })
        .collect();
    let found = batch.await?;
    let mut total: i128 = 0;
    if let Some(item) = found.item(node) {
        let key = || key_display(Some(&counter.pk), counter.sk.as_deref());
        check_type::<E::Table>(Some(item), counter.entity, counter.entity, key)?;
        total += number(counter, item, &counter.pk)?;
    }
    let expected = shard_type(counter.entity);
    for (n, slot) in shards {
        let Some(item) = found.item(slot) else { continue };
        let pk = shard_pk(&counter.pk, n);
        let key = || key_display(Some(&pk), counter.sk.as_deref());
        check_type::<E::Table>(Some(item), &expected, counter.entity, key)?;
        total += number(counter, item, &pk)?;
    }
    u64::try_from(total).map_err(|_| Error::CorruptItem {
        entity: counter.entity,
        key: key_display(Some(&counter.pk), counter.sk.as_deref()),
        reason: Why::ShardedCount {
            attribute: counter.attr,
            total: total.to_string(),
            shards: counter.shards,
        },
    })
}

/// The update of one shard item: `ADD` the moves, `SET` the shard's entity type, on a shard
/// item that is absent (created) or a shard of the same node entity.
pub(crate) fn shard_update<T: Table>(
    b: &mut crate::expr::ExprBuilder,
    counter: &CounterRef,
    adds: &str,
) -> (String, String) {
    let pk = b.name(T::PK);
    let ty = b.name(type_attr::<T>());
    let value = b.value(AttributeValue::S(shard_type(counter.entity)));
    (
        format!("ADD {adds} SET {ty} = {value}"),
        format!("(attribute_not_exists({pk}) OR {ty} = {value})"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shard_of_is_stable_and_in_range() {
        // FNV-1a 64 of "" and "a" (published test vectors).
        assert_eq!(shard_of("", u16::MAX), (0xcbf2_9ce4_8422_2325u64 % 65535) as u16);
        assert_eq!(shard_of("a", u16::MAX), (0xaf63_dc4c_8601_ec8cu64 % 65535) as u16);
        for shards in [1, 2, 16, MAX_SHARDS] {
            for id in ["", "ann", "bob#1", "é", "%23"] {
                assert!(shard_of(id, shards) < shards);
            }
        }
        assert_eq!(shard_of("ann", 0), 0);
    }

    #[test]
    fn shards_spread_writers() {
        let mut seen = [0u32; 16];
        for i in 0..1600 {
            seen[usize::from(shard_of(&format!("user{i}"), 16))] += 1;
        }
        assert!(seen.iter().all(|&n| (50..=150).contains(&n)), "{seen:?}");
    }

    #[test]
    fn shard_keys() {
        assert_eq!(shard_pk("USER#bob", 3), "USER#bob#SHARD#3");
        assert_eq!(shard_type("User"), "User~shard");
    }
}
