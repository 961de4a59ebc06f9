//! The [`Entity`] trait: a struct stored as items of a table, its keys and its version field.

use serde::Serialize;
use serde::de::DeserializeOwned;

use super::expiry::TtlDef;
use super::stamp::{Stamp, TimestampsDef};
use super::table::{IndexDef, Table};
use super::unique::UniqueDef;
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

/// An attribute and the string value that mark an item as one entity's: its entity type
/// ([`Identity::Tagged`]), or one of its constant attributes ([`Entity::CONSTANTS`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TypeTag {
    /// The attribute (the table's `type_attr`, the entity's own `#[entity(type_attr)]`, or
    /// a constant's name).
    pub attr: &'static str,
    /// The value: the entity's name, or the constant's value.
    pub value: &'static str,
}

/// How the items of an entity are told apart from the other items of its table.
///
/// | declared | identity | written on every item | an item read is the entity's when |
/// | --- | --- | --- | --- |
/// | nothing (the default) | `Tagged` by the table's `type_attr` | `_type = "User"` | it carries the tag |
/// | `#[entity(type_attr = "kind", name = "user")]` | `Tagged` by the entity's attribute | `kind = "user"` | it carries the tag |
/// | `#[entity(no_type_attr)]`, or `#[table(no_type_attr)]` | `Keys` | nothing | its keys parse with the entity's templates, and it carries no tag of the table's type attribute |
///
/// With `Keys`, the key templates are the discriminator: give each entity its own literal
/// prefix (`"USER#<id>"`, `"ORDER#<id>"`), or keep one entity per table. Queries of a
/// `Keys` entity skip the items in their key range that are not the entity's, as the type
/// filter does for tagged entities; reading one key that holds another entity's item is
/// [`Error::WrongEntityType`]. Trees and edges keep bookkeeping items next to the entity's
/// and need a tagged entity on a table with a type attribute (a compile error otherwise).
///
/// Either way, an entity's [constant attributes](Entity::CONSTANTS) are part of what tells
/// its items apart: an item is the entity's only when it also holds each of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Identity {
    /// An attribute names the entity.
    Tagged(TypeTag),
    /// Nothing is written: the keys tell.
    Keys,
}

impl Identity {
    /// The identity of an entity named `name` on table `T` that declares nothing: tagged with
    /// the table's type attribute, or by its keys on a table without one.
    pub const fn of_table<T: Table>(name: &'static str) -> Identity {
        match T::TYPE_ATTR {
            Some(attr) => Identity::Tagged(TypeTag { attr, value: name }),
            None => Identity::Keys,
        }
    }

    /// The tag, when items carry one.
    pub const fn tag(self) -> Option<TypeTag> {
        match self {
            Identity::Tagged(tag) => Some(tag),
            Identity::Keys => None,
        }
    }
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
/// | `#[entity(created_at = created, updated_at = updated)]` | timestamp fields every write maintains (either or both; see [`TimestampField`](crate::entity::TimestampField) for the types and [`Db::with_clock`](crate::Db::with_clock) for the clock) |
/// | `#[entity(schema = 3, upgrade = upgrade_user)]` | the schema version every write stores, and the function that upgrades the raw item of an older version one step on every read (see [`SchemaDef`](crate::entity::SchemaDef), [`Db::migrate`](crate::Db::migrate)) |
/// | `#[unique]` on a field, `#[unique(scope = "email")]`, `#[entity(unique(org, name))]` | a value owned by at most one item of the scope (the field's [`UniqueField`](crate::entity::UniqueField) key text), kept by sentinel items in the write's transaction; see [`ops::unique`](crate::ops::unique) for the requests each write sends |
/// | `#[entity(ttl = expires)]` | the expiry field, stored as seconds in the table's Time to Live attribute (`#[table(ttl = "expires")]`); reads hide expired items (see [`ExpiryField`](crate::entity::ExpiryField)) |
/// | `#[entity(type_attr = "kind")]` | the entity's items are tagged in this attribute instead of the table's (with `name` as the value) |
/// | `#[entity(no_type_attr)]` | the items carry no tag: told apart by their keys ([`Identity::Keys`]) |
/// | `#[entity(constant(__edb_v__ = "1", "any name" = "x"))]` | attributes every write stores with these string values, and every read requires (see [`CONSTANTS`](Entity::CONSTANTS)); repeatable |
/// | `#[entity(strict)]` | reads refuse an item holding an attribute that is neither a field nor the library's ([`CorruptReason::UnknownAttributes`](crate::error::CorruptReason::UnknownAttributes)); see the guide's `docs/data-rules.md` |
/// | `#[entity(validate = check_order)]` | `fn check_order(&Order) -> Result<(), E>` (any error type `E`) runs before every write of a whole value; its error is [`Error::Hook`] and nothing is sent |
/// | `#[entity(after_read = normalize)]` | `fn normalize(&mut Order)` runs on every value read; changing the key or the version is [`Error::Hook`] |
/// | `#[generated(uuid7)]`, `#[generated(ulid)]` on a field | a time-ordered id `create` and `put` (through `&mut`) give the field when it is unset ([`generate_ids`](Entity::generate_ids)); feature `uuid` |
/// | `#[entity(from_key)]` on a field | the field is stored only in the keys that hold it and read back from them (it has no typed path) |
/// | `#[entity(none_as_null)]` on an `Option` field | its `None` is stored as `NULL` (and `set(field, None)` writes `NULL`); by default a `None` leaves the attribute out and `set(field, None)` removes it (`#[table(none_as_null)]` for every field) |
/// | `#[index(gsi1, pk = "ORG#<org>", sk = "USER#<name>")]` | keys of the item in an index the table declares; repeatable |
/// | `#[index(.., when = unread)]` | the item is in the index while the bool field (or method) `unread` is true; an update that sets a `when` field moves the item in or out; the fields of an index chosen by a `when` *method* are read-only in updates (an update cannot evaluate it) |
/// | `#[index(gsi1, pk = "DAY#<day>", computed(day: NaiveDate = day_of(created_at)))]` | a placeholder whose value a function computes from fields (`fn day_of(at: &DateTime<Utc>) -> NaiveDate`, or `Self::day_of`); queries take the declared type (`query_gsi1(&db, day)`); an update that sets the fields writes the key again. Only in `#[index]` templates |
/// | `#[index(gsi1, .., when = is_fork, query = forks)]` | one of several keys on one index, chosen by `when`, queried by `query_forks` |
///
/// The derive generates, on the struct:
///
/// - `User::key(id) -> Key<User>` taking the key fields in order of first appearance (values,
///   references, or `&str` for `String` fields), and `user.key()` (through [`Entity::key`]);
/// - `User::parse_key(pk, sk)` returning the key fields, rejecting keys the templates did not
///   produce;
/// - one typed attribute per stored field, named after it in upper case (`User::NICKNAME`,
///   an [`Attr`](crate::Attr)) for conditions and updates; primary-key fields and the
///   version field are read-only in updates. A field an index key is made of can be set:
///   the update writes each index-key attribute (partition or sort key) made of it again in
///   the same request, and needs that attribute's other fields set with it
///   ([`RequestProblem::IndexKeyIncomplete`](crate::error::RequestProblem), refused before
///   sending) unless the primary key holds them; attributes made of other fields are left
///   as stored (see the guide's `docs/writes.md`);
/// - repository methods: `User::get(&db, id)`, `user.create(&db)`, `user.put(&db)`,
///   `user.replace(&db)`, `User::update(&db, id)`, `User::delete(&db, id)` (versioned entities
///   take `&mut self` so the new version is stored in the value);
/// - query constructors, one per access path (see [`Query`](crate::Query)).
///
/// A placeholder written `<path:verbatim>` puts the value into the key as it is, without
/// escapes, for tables laid out by other code (see [`key`](crate::key)).
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
    /// The schema version and its upgrade function (`#[entity(schema = .., upgrade = ..)]`,
    /// see [`SchemaDef`](super::schema::SchemaDef)); `None` for an entity that declares none
    /// (its items carry no schema attribute and are read as they are).
    const SCHEMA: Option<super::schema::SchemaDef> = None;
    /// The lifecycle timestamp fields (`#[entity(created_at = .., updated_at = ..)]`).
    const TIMESTAMPS: TimestampsDef = TimestampsDef::NONE;
    /// The expiry field (`#[entity(ttl = field)]`), stored in the table's
    /// [`TTL`](Table::TTL) attribute as seconds since the epoch.
    const TTL: Option<TtlDef> = None;
    /// How its items are told apart from other entities' ([`Identity`]): by default, the
    /// table's type attribute holding [`NAME`](Entity::NAME).
    const IDENTITY: Identity = Identity::of_table::<Self::Table>(Self::NAME);
    /// The constant attributes (`#[entity(constant(attr = "value", ..))]`), in declaration
    /// order: every write stores each with its value (a put, an upsert, a batch, a
    /// transaction, a tree or edge write), and an item lacking one, or holding another value,
    /// is not the entity's, as an item without its type tag is not: a read of its key is
    /// [`Error::WrongEntityType`], queries and scans filter it out, an update or a delete of
    /// its key is refused. Reads remove them before deserializing. Taking over a table that
    /// another library tags with more than one attribute (ElectroDB's `__edb_e__` and
    /// `__edb_v__`) needs no field for them.
    const CONSTANTS: &'static [TypeTag] = &[];
    /// The unique constraints (`#[unique]` on a field, `#[entity(unique(a, b))]`): each value
    /// is owned by at most one item of its scope, through a sentinel item that every write
    /// of the entity keeps in the same transaction (see [`ops::unique`](crate::ops::unique)).
    const UNIQUES: &'static [UniqueDef] = &[];
    /// The fields marked `#[encrypt]` or `#[sign_only]`. An entity with any is *sealed*: its
    /// items are written and read through the AWS Database Encryption SDK (feature
    /// `encryption`, [`Db::with_encryption`](crate::Db)), every other attribute signed, and
    /// operations that cannot keep a signature are refused
    /// ([`Error::Encryption`](crate::Error::Encryption)).
    const CRYPTO: &'static [super::crypto::CryptoField] = &[];
    /// The sort-key template's literal start: where the entity's keys start in a partition.
    #[doc(hidden)]
    const SORT_KEY_BASE: &'static str = super::shape::sort_key_base(Self::SHAPE);
    /// The stored names of the `#[entity(from_key)]` fields (read back from the keys).
    #[doc(hidden)]
    const FROM_KEY_ATTRS: &'static [&'static str] = &[];
    /// The stored names of the fields whose `None` is stored as `NULL` (`#[entity(none_as_null)]`,
    /// and a field serde could not read back absent); every other member holding `None` is
    /// left out of the item (see [`Table::NONE_AS_NULL`]).
    #[doc(hidden)]
    const NULL_ATTRS: &'static [&'static str] = &[];
    /// The stored names of the `Option` fields whose `None` leaves the attribute out (the
    /// others, whose type is not an `Option`, keep a `None` their type serializes as
    /// `NULL`, since serde cannot read them back absent).
    #[doc(hidden)]
    const ABSENT_ATTRS: &'static [&'static str] = &[];
    /// The indexes an item may be left out of (an `Option` key field, `when`): an upsert
    /// cannot tell whether an existing item is in them.
    #[doc(hidden)]
    const SPARSE_INDEXES: &'static [&'static str] = &[];
    /// Attributes a layer above (a tree's revision and child count) keeps on the items: the
    /// model does not interpret them, reads remove them before deserializing.
    #[doc(hidden)]
    const BOOKKEEPING_ATTRS: &'static [&'static str] = &[];
    /// The call that updates an item and its copies (a closure tree node's) together: a
    /// plain update would leave the copies stale, so it is refused naming this call
    /// ([`RequestProblem::UpdateCopies`](crate::error::RequestProblem::UpdateCopies)).
    #[doc(hidden)]
    const UPDATE_THROUGH: Option<&'static str> = None;
    /// The declaration as text, for the model tooling (see `EntityShape::parse`; empty for
    /// an `Entity` implemented by hand).
    #[doc(hidden)]
    const SHAPE: &'static str = "";

    // The data rules (`model/rules.rs`), each `None` unless declared.
    /// Strict reads (`#[entity(strict)]`): the names of the attributes the fields are read
    /// from (stored names and serde aliases); an item holding any other attribute that is
    /// not the library's is refused on read.
    #[doc(hidden)]
    const STRICT: Option<&'static [&'static str]> = None;
    /// The validation every write of a whole value runs first (`#[entity(validate = ..)]`).
    #[doc(hidden)]
    const VALIDATE: Option<super::rules::ValidateFn<Self>> = None;
    /// The transformation every read applies (`#[entity(after_read = ..)]`).
    #[doc(hidden)]
    const AFTER_READ: Option<fn(&mut Self)> = None;
    /// The key layout the items are re-keyed from (`#[entity(rekey(pk = "..", sk = ".."))]`),
    /// moved by [`Db::rekey`](crate::Db::rekey).
    const REKEY: Option<super::RekeyDef> = None;

    /// The key in the other layout of a re-keyed entity: `key` (in the entity's layout) in
    /// the old one when `to_old`, else `key` (in the old layout) in the entity's; `None`
    /// for an entity that declares no [`REKEY`](Entity::REKEY), an error for a key its
    /// layout did not write.
    fn rekey_key(_key: &Key<Self>, _to_old: bool) -> Result<Option<Key<Self>>, Error> {
        Ok(None)
    }

    /// Fills in each generated-id field (`#[generated(uuid7)]`, `#[generated(ulid)]`) that is
    /// unset (an empty `String`, `None`, a nil `Uuid`) with a new time-ordered id, leaving
    /// given values as they are. `create` and `put` through `&mut` call it before rendering
    /// the keys; call it yourself before a batch or a transaction, which take `&E` (an unset
    /// generated field there is [`RequestProblem::IdNotGenerated`](crate::error::RequestProblem::IdNotGenerated)).
    fn generate_ids(&mut self) {}

    /// The stored name of the first generated-id field that is unset, if any.
    #[doc(hidden)]
    fn unset_generated(&self) -> Option<&'static str> {
        None
    }

    /// The primary key of this value.
    fn key(&self) -> Key<Self>;

    /// Reads the key fields back from a stored partition and sort key.
    fn parse_key(pk: &str, sk: Option<&str>) -> Result<Self::KeyFields, Error>;

    /// Calls `sink` with the value's key on every index it is in (not one whose optional key
    /// fields are `None`); a verbatim part that would read back differently is an error.
    #[doc(hidden)]
    fn index_keys(
        &self,
        _sink: &mut dyn FnMut(&'static IndexDef, String, Option<String>),
    ) -> Result<(), Error> {
        Ok(())
    }

    /// The index-key attributes an update rewrites because it changes their fields
    /// (`sink(attr, None)`: removed); see `__private::update_index_keys`.
    #[doc(hidden)]
    fn index_key_updates(
        _key: &Key<Self>,
        _actions: &crate::expr::UpdateActions<Self>,
        _sink: &mut dyn FnMut(&'static str, Option<String>),
    ) -> Result<(), Error> {
        Ok(())
    }

    /// Calls `sink(i, text)` with the value text of each unique constraint `i` in `item`
    /// (`None`: it owns nothing).
    #[doc(hidden)]
    fn unique_texts(
        _item: &crate::item::Item,
        _sink: &mut dyn FnMut(usize, Option<String>),
    ) -> Result<(), Error> {
        Ok(())
    }

    /// The stored version this value was read with (0 for a value never written); `None`
    /// without a version field.
    fn version(&self) -> Option<u64> {
        None
    }

    /// Sets the version field (no-op without one). Called after a successful write.
    fn set_version(&mut self, _version: u64) {}

    /// Writes the timestamp fields' values for a write of `stamp` into `item`.
    #[doc(hidden)]
    fn stamp_item(&self, _stamp: Stamp, _item: &mut crate::item::Item) -> Result<(), Error> {
        Ok(())
    }

    /// Calls `sink(attr, is_created_at, value)` with each timestamp attribute's value at
    /// `stamp`'s time (what an update writes).
    #[doc(hidden)]
    fn stamp_attrs(
        _stamp: Stamp,
        _sink: &mut dyn FnMut(&'static str, bool, aws_sdk_dynamodb::types::AttributeValue),
    ) -> Result<(), Error> {
        Ok(())
    }

    /// The expiry in whole seconds since the epoch (`None`: never); out of range is
    /// [`Error::InvalidRequest`].
    #[doc(hidden)]
    fn expiry_secs(&self) -> Result<Option<i64>, Error> {
        Ok(None)
    }

    /// Sets the timestamp fields to what a successful write of `stamp` stored.
    #[doc(hidden)]
    fn set_stamp(&mut self, _stamp: Stamp) {}

    /// Pushes on `out` the `#[entity(from_key)]` fields' stored values, read from `item`'s
    /// keys (the reader puts them into the item before deserializing).
    #[doc(hidden)]
    fn key_field_values(
        _item: &crate::item::Item,
        _out: &mut Vec<(&'static str, aws_sdk_dynamodb::types::AttributeValue)>,
    ) -> Result<(), Error> {
        Ok(())
    }
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
        if let Some(refused) = self.refusal() {
            let table = <E::Table as Table>::PK;
            let attribute =
                if refused.in_sk { <E::Table as Table>::SK.unwrap_or(table) } else { table };
            return Err(Error::InvalidKey {
                entity: E::NAME,
                attribute: attribute.to_owned(),
                problem: refused.problem.clone(),
            });
        }
        check_key_value(E::NAME, <E::Table as Table>::PK, self.pk(), MAX_PARTITION_KEY_BYTES)?;
        if let (Some(sk), Some(attr)) = (self.sk(), <E::Table as Table>::SK) {
            check_key_value(E::NAME, attr, sk, MAX_SORT_KEY_BYTES)?;
        }
        Ok(())
    }
}
