//! The tenant guard: the one check that a request of a tenant-scoped handle
//! ([`Db::for_tenant`]) stays inside the tenant's partitions, called where keys become
//! requests. Writes: [`Action`](super::action::Action)'s single-item renderers, the one
//! sender of transactions and the batch writer. Reads: every `GetItem`, batch get, the
//! transaction get, query preparation (its partition key) and cursor checking. Requests
//! that read partitions by other means (scan, vector search) are refused whole. A handle
//! without a tenant passes at the cost of one `Option` check.
//!
//! A tenant's partitions are those whose partition key is `lead` (the table's tenant
//! literal and the escaped tenant id) alone or followed by a separator. Escaping makes
//! that exact: an escaped id holds no separator, so `ORG#acme` never leads `ORG#acme2`'s,
//! `ORG#acme%23x`'s (`acme#x`) or any other tenant's keys.

use aws_sdk_dynamodb::types::{AttributeValue, TransactWriteItem, WriteRequest};

use crate::db::{Db, TenantScope};
use crate::error::{Error, TenantProblem};
use crate::escape::is_separator_byte;
use crate::item::Item;
use crate::model::Table;
use crate::stats::Op;

/// True when the partition key `value` lies inside the partitions led by `lead`.
pub(crate) fn inside(lead: &str, value: &str) -> bool {
    value.strip_prefix(lead).is_some_and(|rest| rest.bytes().next().is_none_or(is_separator_byte))
}

/// What a refused request was: a key of an operation, or a cursor's start key.
#[derive(Clone, Copy)]
pub(crate) enum Source {
    /// A key of a request of this operation.
    Key(Op),
    /// A query's cursor.
    Cursor,
}

/// The guard: `Ok` when the handle has no tenant, or when the partition key `attr` holds a
/// string inside the tenant's partitions; [`Error::OutsideTenant`] otherwise (a missing or
/// non-string key is outside too).
pub(crate) fn guard<T: Table>(
    db: &Db<T>,
    source: Source,
    attr: &str,
    value: Option<&AttributeValue>,
) -> Result<(), Error> {
    let Some(scope) = db.tenant_scope() else { return Ok(()) };
    let text = match value {
        Some(AttributeValue::S(s)) => s.as_str(),
        _ => "",
    };
    if value.is_some() && inside(&scope.lead, text) {
        return Ok(());
    }
    let (attribute, value) = (attr.to_owned(), text.to_owned());
    Err(outside(
        scope,
        match source {
            Source::Key(operation) => TenantProblem::ForeignKey { operation, attribute, value },
            Source::Cursor => TenantProblem::ForeignCursor { attribute, value },
        },
    ))
}

fn outside(scope: &TenantScope, problem: TenantProblem) -> Error {
    Error::OutsideTenant { tenant: scope.id.clone(), problem }
}

/// Refuses a request that cannot be confined to a tenant's partitions (a scan, a vector
/// search, a query of a multi-attribute index) on a scoped handle.
pub(crate) fn unconfined<T: Table>(
    db: &Db<T>,
    operation: Op,
    index: Option<&str>,
) -> Result<(), Error> {
    match db.tenant_scope() {
        None => Ok(()),
        Some(scope) => Err(outside(
            scope,
            TenantProblem::Unconfined { operation, index: index.map(str::to_owned) },
        )),
    }
}

/// The guard on the table key `key` of a request of `op`.
pub(crate) fn key<T: Table>(db: &Db<T>, op: Op, key: &Item) -> Result<(), Error> {
    guard(db, Source::Key(op), T::PK, key.get(T::PK))
}

/// The guard on a whole item written by `op`: its table key and the partition key of every
/// index (written from templates) it is in.
pub(crate) fn item<T: Table>(db: &Db<T>, op: Op, item: &Item) -> Result<(), Error> {
    if db.tenant_scope().is_none() {
        return Ok(());
    }
    key(db, op, item)?;
    for index in T::INDEXES.iter().filter(|i| !i.is_multi()) {
        if let Some(value) = item.get(index.pk) {
            guard(db, Source::Key(op), index.pk, Some(value))?;
        }
    }
    Ok(())
}

/// The guard on every action of a transaction.
pub(crate) fn transact<T: Table>(db: &Db<T>, items: &[TransactWriteItem]) -> Result<(), Error> {
    if db.tenant_scope().is_none() {
        return Ok(());
    }
    for action in items {
        if let Some(put) = &action.put {
            item(db, Op::PutItem, &put.item)?;
        } else if let Some(update) = &action.update {
            key(db, Op::UpdateItem, &update.key)?;
        } else if let Some(delete) = &action.delete {
            key(db, Op::DeleteItem, &delete.key)?;
        } else if let Some(check) = &action.condition_check {
            key(db, Op::TransactWriteItems, &check.key)?;
        }
    }
    Ok(())
}

/// The guard on every request of a batch write.
pub(crate) fn batch_write<'r, T: Table>(
    db: &Db<T>,
    requests: impl IntoIterator<Item = &'r WriteRequest>,
) -> Result<(), Error> {
    if db.tenant_scope().is_none() {
        return Ok(());
    }
    for request in requests {
        if let Some(put) = &request.put_request {
            item(db, Op::BatchWriteItem, &put.item)?;
        } else if let Some(delete) = &request.delete_request {
            key(db, Op::BatchWriteItem, &delete.key)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::inside;
    use crate::escape::{SEPARATORS, escape_into, unescape};

    fn lead(prefix: &str, id: &str) -> String {
        let mut out = prefix.to_owned();
        escape_into(id, &mut out);
        out
    }

    /// The model: the tenant a partition key `value` built by a template `prefix<tenant>rest`
    /// belongs to is the unescaped component after `prefix`, up to the first separator.
    fn owner(prefix: &str, value: &str) -> Option<String> {
        let rest = value.strip_prefix(prefix)?;
        let end = rest.find(SEPARATORS).unwrap_or(rest.len());
        unescape(&rest[..end]).ok().map(|c| c.into_owned())
    }

    /// Ids that are prefixes of each other, hold separators, the escape character and
    /// its escapes, or nothing.
    fn id() -> impl Strategy<Value = String> {
        prop_oneof![
            "[a-c#%/|~:23AF]{0,6}",
            Just("acme".to_owned()),
            Just("acme2".to_owned()),
            Just("acme#x".to_owned()),
            Just("acme%23x".to_owned()),
            Just("acm".to_owned()),
            any::<String>(),
        ]
    }

    /// What a key template writes after the tenant: nothing, or a separator and anything.
    fn rest() -> impl Strategy<Value = String> {
        prop_oneof![Just(String::new()), ("[#/|~:]", "[a-z#%0-9]{0,6}").prop_map(|(s, t)| s + &t)]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2048))]

        /// A key built for `other` with any literal after the tenant lies inside `tenant`'s
        /// partitions exactly when the ids are equal.
        #[test]
        fn keys_of_exactly_one_tenant(
            prefix in prop_oneof![Just(""), Just("ORG#"), Just("t|")],
            tenant in id(),
            other in id(),
            rest in rest(),
        ) {
            let value = lead(prefix, &other) + &rest;
            prop_assert_eq!(inside(&lead(prefix, &tenant), &value), tenant == other);
            prop_assert_eq!(owner(prefix, &value), Some(other.clone()));
        }

        /// Any text at all (a hand-made or another layout's key): inside exactly when the
        /// model says it belongs to the tenant.
        #[test]
        fn any_text_against_the_model(
            tenant in id(),
            value in prop_oneof![any::<String>(), "ORG#[a-c#%/|~:23AF]{0,8}"],
        ) {
            let model = owner("ORG#", &value).as_deref() == Some(tenant.as_str());
            prop_assert_eq!(inside(&lead("ORG#", &tenant), &value), model, "{:?}", value);
        }
    }

    #[test]
    fn crafted() {
        let acme = lead("ORG#", "acme");
        assert!(inside(&acme, "ORG#acme"));
        assert!(inside(&acme, "ORG#acme#USER#x"));
        assert!(inside(&acme, "ORG#acme:x"));
        for foreign in ["ORG#acme2", "ORG#acme%23x", "ORG#acm", "ORG#", "org#acme", "CONFIG", ""] {
            assert!(!inside(&acme, foreign), "{foreign}");
        }
        assert!(inside(&lead("ORG#", "acme#x"), "ORG#acme%23x#USER#1"));
        assert!(!inside(&lead("ORG#", "acme#x"), "ORG#acme#x"));
    }
}
