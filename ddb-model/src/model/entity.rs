//! The [`Entity`] trait: a struct stored as items of a table, its keys and its version field.

use serde::Serialize;
use serde::de::DeserializeOwned;

use super::table::{IndexDef, Table};
use crate::error::Error;
use crate::key::{Key, MAX_PARTITION_KEY_BYTES, MAX_SORT_KEY_BYTES, check_key_value};

/// The optimistic-locking field of an entity: its attribute name and the largest version its
/// Rust type can hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VersionDef {
    /// The attribute name (after serde renames).
    pub attr: &'static str,
    /// The largest value of the field's type.
    pub max: u64,
}

/// A struct stored as items of a single-table design. Derive it with `#[derive(Entity)]`.
///
/// ```
/// use ddb_model::{Entity, Table};
/// use serde::{Deserialize, Serialize};
///
/// #[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
/// #[entity(pk = "USER#<id>", sk = "PROFILE")]
/// struct User {
///     id: String,
///     email: String,
/// }
///
/// let key = User::key("alice");
/// assert_eq!(key.pk(), "USER#alice");
/// assert_eq!(key.sk(), Some("PROFILE"));
///
/// let user = User { id: "a#b".into(), email: "a@example.com".into() };
/// assert_eq!(user.key().pk(), "USER#a%23b"); // separators in values are escaped
/// assert_eq!(User::parse_key("USER#a%23b", "PROFILE").unwrap(), ("a#b".to_string(),));
/// ```
///
/// `#[derive(Entity)]` needs `Serialize` and `Deserialize` too (fields are stored through
/// serde, so serde's `rename`, `rename_all`, `skip` and `default` apply).
///
/// | attribute | meaning |
/// | --- | --- |
/// | `#[entity(pk = "USER#<id>")]` | partition key template (required) |
/// | `#[entity(sk = "PROFILE")]` | sort key template (required when the table has a sort key) |
/// | `#[entity(table = App)]` | the table type (default [`DefaultTable`](crate::DefaultTable)) |
/// | `#[entity(name = "User")]` | entity type written to every item (default: the struct name) |
/// | `#[entity(version = version)]` | optimistic locking on an integer field |
/// | `#[index(gsi1, pk = "ORG#<org>", sk = "USER#<name>")]` | keys of the item in an index the table declares; repeatable |
///
/// The derive generates, on the struct:
///
/// - `User::key(id) -> Key<User>` taking the key fields in order of first appearance (values,
///   references, or `&str` for `String` fields), and `user.key()` (through [`Entity::key`]);
/// - `User::parse_key(pk, sk)` returning the key fields, rejecting keys the templates did not
///   produce;
/// - one typed attribute per stored field, named after it in upper case (`User::NICKNAME`,
///   an [`Attr`](crate::Attr)) for conditions and updates; fields used in a key, and the
///   version field, are read-only in updates;
/// - repository methods: `User::get(&db, id)`, `user.create(&db)`, `user.put(&db)`,
///   `user.replace(&db)`, `User::update(&db, id)`, `User::delete(&db, id)` (versioned entities
///   take `&mut self` so the new version is stored in the value);
/// - query constructors, one per access path (see [`Query`](crate::Query)).
///
/// The rules of key templates are in the [`key`](crate::key) module.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an entity",
    label = "add `#[derive(ddb_model::Entity)]` and an `#[entity(pk = \"...\")]` attribute"
)]
pub trait Entity: Serialize + DeserializeOwned + Send + Sync + Sized + 'static {
    /// The table the entity is stored in.
    type Table: Table;
    /// The values of the key fields, in the order `key(..)` takes them.
    type KeyFields;
    /// The entity type written to every item (the struct name unless `#[entity(name = ..)]`).
    const NAME: &'static str;
    /// The optimistic-locking field, if any (`#[entity(version = field)]`).
    const VERSION: Option<VersionDef>;
    /// Attributes that a layer built on entities keeps on this entity's items for its own
    /// bookkeeping (a tree node's revision and child count, for `#[hierarchy]` entities). The
    /// entity layer does not interpret them: reads remove them before deserializing, so they
    /// never reach the struct. Empty unless a derive fills it.
    #[doc(hidden)]
    const BOOKKEEPING_ATTRS: &'static [&'static str] = &[];

    /// The primary key of this value.
    fn key(&self) -> Key<Self>;

    /// Reads the key fields back from a stored partition and sort key.
    fn parse_key(pk: &str, sk: Option<&str>) -> Result<Self::KeyFields, Error>;

    /// Calls `sink` with the key of every secondary index this value belongs to (an index whose
    /// optional key fields are `None` is skipped: a sparse index).
    #[doc(hidden)]
    fn index_keys(&self, sink: &mut dyn FnMut(&'static IndexDef, String, Option<String>));

    /// The stored version this value was read with (0 for a value never written); `None`
    /// without a version field.
    fn version(&self) -> Option<u64>;

    /// Sets the version field (no-op without one). Called after a successful write.
    fn set_version(&mut self, version: u64);
}

/// A field type that can hold an optimistic-locking version: an integer type.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a version field",
    label = "`#[entity(version = ..)]` needs an integer field",
    note = "use an integer type such as `u64`; the version counts writes, starting from 0 for a value never written"
)]
pub trait VersionField: Copy {
    /// The largest version the type holds.
    const MAX_VERSION: u64;
    /// The version as `u64` (negative values count as 0).
    fn to_version(self) -> u64;
    /// Converts back; the caller guarantees `v <= MAX_VERSION`.
    fn from_version(v: u64) -> Self;
}

macro_rules! version_field {
    ($($t:ty),*) => {$(
        impl VersionField for $t {
            const MAX_VERSION: u64 = if (<$t>::MAX as u128) > u64::MAX as u128 {
                u64::MAX
            } else {
                <$t>::MAX as u64
            };
            fn to_version(self) -> u64 {
                u64::try_from(self).unwrap_or(0)
            }
            fn from_version(v: u64) -> Self {
                <$t>::try_from(v).unwrap_or(<$t>::MAX)
            }
        }
    )*};
}
version_field!(u8, u16, u32, u64, u128, usize, i8, i16, i32, i64, i128, isize);

/// The [`VersionField`] functions of `T`; generated code reaches the version field's type
/// only through [`version_fns`], so a wrong type is reported once, at the field.
#[doc(hidden)]
pub struct VersionFns<T> {
    pub max: u64,
    pub get: fn(T) -> u64,
    pub set: fn(u64) -> T,
}

#[doc(hidden)]
pub const fn version_fns<T: VersionField>() -> VersionFns<T> {
    VersionFns { max: T::MAX_VERSION, get: T::to_version, set: T::from_version }
}

// `Key<E>` is defined in `key`, below the model; checking it needs the entity's table.
impl<E: Entity> Key<E> {
    /// Checks the DynamoDB key limits: no empty key, partition key at most 2048 bytes, sort key
    /// at most 1024 bytes. Every operation calls this before sending anything.
    pub fn validate(&self) -> Result<(), Error> {
        check_key_value(E::NAME, <E::Table as Table>::PK, self.pk(), MAX_PARTITION_KEY_BYTES)?;
        if let (Some(sk), Some(attr)) = (self.sk(), <E::Table as Table>::SK) {
            check_key_value(E::NAME, attr, sk, MAX_SORT_KEY_BYTES)?;
        }
        Ok(())
    }
}
