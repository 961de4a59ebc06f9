//! Schema versions: the version an entity's items are written with, and the upgrade of an
//! older item, step by step, on the raw item before it is decoded.
//!
//! An entity declares `#[entity(schema = 3, upgrade = upgrade_user)]`. Every whole-item write
//! stores the version in the table's schema attribute ([`Table::SCHEMA_ATTR`], `_schema`).
//! A read finds the stored version ([`UNVERSIONED`] when the attribute is missing: items
//! written before the entity declared versions) and calls the upgrade function once per step
//! (`from = 1`, then `2`, ...) on the raw item, then decodes it. The upgraded item is not
//! written back: reads do not write (a read would then need write capacity, could fail on a
//! write, and two readers would race each other and the writers); [`Db::migrate`](crate::Db::migrate)
//! rewrites the table in place.

use aws_sdk_dynamodb::types::AttributeValue;

use super::codec::stored_key;
use super::entity::Entity;
use super::table::Table;
use crate::error::{Error, UpgradeError};
use crate::item::Item;

/// The version of an item that has no schema attribute: it was written before its entity
/// declared a schema version, as version 1.
pub const UNVERSIONED: u32 = 1;

/// An upgrade function: turns the raw item of schema version `from` into the item of version
/// `from + 1`, in place. It sees every attribute as stored (keys and entity type included)
/// and must not change the keys.
///
/// ```
/// use ddb_model::aws_sdk_dynamodb::types::AttributeValue;
/// use ddb_model::{Item, error::UpgradeError};
///
/// // Version 1 stored `name`; version 2 splits it into `first` and `last`.
/// fn upgrade_user(from: u32, item: &mut Item) -> Result<(), UpgradeError> {
///     match from {
///         1 => {
///             let name = match item.remove("name") {
///                 Some(AttributeValue::S(name)) => name,
///                 _ => return Err("no `name` string".into()),
///             };
///             let (first, last) = name.split_once(' ').unwrap_or((&name, ""));
///             item.insert("first".into(), AttributeValue::S(first.into()));
///             item.insert("last".into(), AttributeValue::S(last.into()));
///             Ok(())
///         }
///         _ => Err(format!("no upgrade from version {from}").into()),
///     }
/// }
/// # let mut item = Item::new();
/// # item.insert("name".into(), AttributeValue::S("Ada Lovelace".into()));
/// # upgrade_user(1, &mut item).unwrap();
/// # assert_eq!(item["last"], AttributeValue::S("Lovelace".into()));
/// ```
pub type UpgradeFn = fn(from: u32, item: &mut Item) -> Result<(), UpgradeError>;

/// The schema version of an entity (`#[entity(schema = 3, upgrade = upgrade_user)]`): the
/// version its writes store, and the function that upgrades older items.
#[derive(Debug, Clone, Copy)]
pub struct SchemaDef {
    /// The current version (at least 1).
    pub version: u32,
    /// Upgrades an item of an older version one step; `None` only for version 1, which has
    /// no older version.
    pub upgrade: Option<UpgradeFn>,
}

impl SchemaDef {
    /// Version `version`, upgraded by `upgrade` (the derive's call; the function's type is
    /// checked here, at the path the attribute names).
    pub const fn new(version: u32, upgrade: UpgradeFn) -> SchemaDef {
        SchemaDef { version, upgrade: Some(upgrade) }
    }

    /// Version 1: nothing to upgrade.
    pub const fn first() -> SchemaDef {
        SchemaDef { version: UNVERSIONED, upgrade: None }
    }
}

/// The schema version stored on `item` of entity `E` ([`UNVERSIONED`] without the
/// attribute). A value that is no positive integer is [`Error::CorruptItem`].
pub(crate) fn stored_version<E: Entity>(item: &Item) -> Result<u32, Error> {
    let attr = <E::Table as Table>::SCHEMA_ATTR;
    let parsed = match item.get(attr) {
        None => return Ok(UNVERSIONED),
        Some(AttributeValue::N(n)) => n.parse::<u32>().ok().filter(|v| *v >= 1),
        Some(_) => None,
    };
    parsed.ok_or_else(|| Error::CorruptItem {
        entity: E::NAME,
        key: stored_key::<E::Table>(item),
        reason: crate::error::CorruptReason::SchemaVersion { attribute: attr },
    })
}

/// Brings a raw item of `E` to its current schema version (a no-op for an entity without
/// one, or an item already current) and removes the schema attribute, so that only fields
/// are left to decode. Returns the version the item was stored with.
///
/// A newer version than `E`'s is [`Error::SchemaTooNew`]; a failed step is
/// [`Error::SchemaUpgrade`] naming the step.
pub(crate) fn upgrade_item<E: Entity>(item: &mut Item) -> Result<Option<u32>, Error> {
    let Some(schema) = E::SCHEMA else {
        return Ok(None);
    };
    let found = stored_version::<E>(item)?;
    if found > schema.version {
        return Err(Error::SchemaTooNew {
            entity: E::NAME,
            key: stored_key::<E::Table>(item),
            found,
            current: schema.version,
        });
    }
    let mut at = found;
    while at < schema.version {
        let step = match schema.upgrade {
            Some(upgrade) => upgrade(at, item),
            None => Err(format!("`{}` declares no upgrade function", E::NAME).into()),
        };
        if let Err(source) = step {
            return Err(Error::SchemaUpgrade {
                entity: E::NAME,
                key: stored_key::<E::Table>(item),
                from: at,
                to: at + 1,
                source,
            });
        }
        at += 1;
    }
    item.remove(<E::Table as Table>::SCHEMA_ATTR);
    Ok(Some(found))
}

/// The schema attribute and value that a write of `E` stores, if `E` declares a schema.
pub(crate) fn schema_attr_value<E: Entity>() -> Option<(&'static str, AttributeValue)> {
    E::SCHEMA.map(|schema| {
        (<E::Table as Table>::SCHEMA_ATTR, AttributeValue::N(schema.version.to_string()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_has_nothing_to_upgrade() {
        let first = SchemaDef::first();
        assert_eq!(first.version, UNVERSIONED);
        assert!(first.upgrade.is_none());
    }
}
