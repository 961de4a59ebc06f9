//! The [`Entity`] trait and the conversion between entities and raw items.

use aws_sdk_dynamodb::types::AttributeValue;
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::error::Error;
pub(crate) use crate::error::key_display;
use crate::item::{Item, MAX_ITEM_BYTES};
use crate::key::{Key, MAX_PARTITION_KEY_BYTES, MAX_SORT_KEY_BYTES, check_key_value};
use crate::table::{IndexDef, Table};

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
/// The derive generates, on the struct: `key(..)` taking the key fields, `parse_key`,
/// one typed attribute path per field (`User::EMAIL`), and the repository methods `get`,
/// `create`, `put`, `replace`, `update` and `delete`. See the crate documentation for the
/// `#[entity]` and `#[index]` attributes.
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

/// The string attribute `name` of `item`, if it is one.
pub(crate) fn string_attr<'a>(item: &'a Item, name: &str) -> Option<&'a str> {
    match item.get(name) {
        Some(AttributeValue::S(s)) => Some(s),
        _ => None,
    }
}

/// Removes the table's key, index-key and entity-type attributes from a stored item, so that
/// only the entity's fields are left to deserialize; returns the stored partition and sort key.
/// The name prefix of the marker attributes an update that returns its result writes for a
/// moment (see [`Update`](crate::ops::Update)); reads never show them to entities.
pub(crate) const MARKER_PREFIX: &str = "_ddbm.";

/// True when `item` holds marker attributes.
pub(crate) fn has_markers(item: &Item) -> bool {
    item.keys().any(|k| k.starts_with(MARKER_PREFIX))
}

/// Removes the marker attributes of updates from `item`.
pub(crate) fn strip_markers(item: &mut Item) {
    if has_markers(item) {
        item.retain(|k, _| !k.starts_with(MARKER_PREFIX));
    }
}

pub(crate) fn strip_bookkeeping<T: Table>(item: &mut Item) -> (Option<String>, Option<String>) {
    strip_markers(item);
    let text = |v: Option<AttributeValue>| match v {
        Some(AttributeValue::S(s)) => Some(s),
        _ => None,
    };
    let pk = text(item.remove(T::PK));
    let sk = text(T::SK.and_then(|a| item.remove(a)));
    item.remove(T::TYPE_ATTR);
    for index in T::INDEXES {
        item.remove(index.pk);
        if let Some(sk) = index.sk {
            item.remove(sk);
        }
    }
    (pk, sk)
}

/// Converts an entity into the item to store: its fields (through serde), the table and index
/// keys, and the entity type. `version` replaces the stored version attribute when given.
///
/// Checks every limit before returning: key sizes, no empty keys, no field colliding with a
/// key attribute, the item size.
pub fn to_item<E: Entity>(entity: &E, version: Option<u64>) -> Result<Item, Error> {
    let mut item: Item = crate::item::to_fields(entity)
        .map_err(|source| Error::Serialize { entity: E::NAME.to_owned(), source })?;
    if let Some(attr) = item.keys().find(|k| k.starts_with(MARKER_PREFIX)) {
        return Err(Error::AttributeCollision { entity: E::NAME, attribute: attr.clone() });
    }
    let key = entity.key();
    key.validate()?;

    let reserved = |item: &mut Item, attr: &str, value: String| -> Result<(), Error> {
        match item.insert(attr.to_owned(), AttributeValue::S(value)) {
            None => Ok(()),
            Some(_) => {
                Err(Error::AttributeCollision { entity: E::NAME, attribute: attr.to_owned() })
            }
        }
    };
    let table_sk = <E::Table as Table>::SK;
    let (pk, sk) = (key.pk().to_owned(), key.sk().map(str::to_owned));
    reserved(&mut item, <E::Table as Table>::PK, pk)?;
    if let (Some(attr), Some(sk)) = (table_sk, sk) {
        reserved(&mut item, attr, sk)?;
    }
    reserved(&mut item, <E::Table as Table>::TYPE_ATTR, E::NAME.to_owned())?;

    let mut index_result = Ok(());
    entity.index_keys(&mut |index, pk, sk| {
        if index_result.is_err() {
            return;
        }
        index_result = check_key_value(E::NAME, index.pk, &pk, MAX_PARTITION_KEY_BYTES)
            .and_then(|()| reserved(&mut item, index.pk, pk))
            .and_then(|()| match (index.sk, sk) {
                (Some(attr), Some(sk)) => check_key_value(E::NAME, attr, &sk, MAX_SORT_KEY_BYTES)
                    .and_then(|()| reserved(&mut item, attr, sk)),
                _ => Ok(()),
            });
    });
    index_result?;

    if let (Some(def), Some(v)) = (E::VERSION, version) {
        item.insert(def.attr.to_owned(), AttributeValue::N(v.to_string()));
    }

    // One pass over the values: DynamoDB's checks (numbers, sets, nesting) and the size.
    let size = crate::expr::check_item(&item)?;
    if size > MAX_ITEM_BYTES {
        return Err(Error::ItemTooLarge { entity: E::NAME, size, max: MAX_ITEM_BYTES });
    }
    Ok(item)
}

/// Converts a stored item into entity `E`.
///
/// The item must carry `E`'s entity type ([`Error::WrongEntityType`] otherwise), must
/// deserialize ([`Error::Deserialize`]), and its stored keys must be the keys its fields
/// produce ([`Error::CorruptItem`]), so a foreign or tampered item never becomes a silently
/// wrong struct. Key and bookkeeping attributes are removed before deserializing, so they
/// never reach the struct.
pub fn from_item<E: Entity>(mut item: Item) -> Result<E, Error> {
    let table_pk = <E::Table as Table>::PK;
    let table_sk = <E::Table as Table>::SK;
    let display =
        || key_display(string_attr(&item, table_pk), table_sk.and_then(|a| string_attr(&item, a)));

    match item.get(<E::Table as Table>::TYPE_ATTR) {
        Some(AttributeValue::S(t)) if t == E::NAME => {}
        Some(AttributeValue::S(t)) => {
            return Err(Error::WrongEntityType {
                expected: E::NAME,
                found: Some(t.clone()),
                key: display(),
            });
        }
        _ => {
            return Err(Error::WrongEntityType { expected: E::NAME, found: None, key: display() });
        }
    }

    let (stored_pk, stored_sk) = strip_bookkeeping::<E::Table>(&mut item);
    for attr in E::BOOKKEEPING_ATTRS {
        item.remove(*attr);
    }
    // Only an error shows the key: it is formatted then, not for every item read.
    let key = || key_display(stored_pk.as_deref(), stored_sk.as_deref());

    let entity: E = crate::item::from_fields(item).map_err(|source| Error::Deserialize {
        entity: E::NAME,
        key: key(),
        source,
    })?;

    let computed = entity.key();
    if stored_pk.as_deref() != Some(computed.pk()) || stored_sk.as_deref() != computed.sk() {
        return Err(Error::CorruptItem {
            entity: E::NAME,
            key: key(),
            reason: format!(
                "the stored key does not match the key of the item's fields {}",
                key_display(Some(computed.pk()), computed.sk())
            ),
        });
    }
    Ok(entity)
}

// Defined here rather than in `error`, which sits below the entity layer.
impl Error {
    /// The stored item carried by a failed conditional write, read as entity `E`.
    pub fn current<E: Entity>(&self) -> Option<Result<E, Error>> {
        self.current_item().map(|item| from_item::<E>(item.clone()))
    }
}
