//! The conversion between entities and raw items: [`to_item`] (fields through serde, plus the
//! table and index keys, the entity type and constants, every limit checked) and
//! [`from_item`] (entity type, constants, keys and bookkeeping checked and removed, then the
//! fields through serde).

use aws_sdk_dynamodb::types::AttributeValue;

use super::entity::{Entity, Identity};
use super::stamp::Stamp;
use super::table::Table;
use crate::error::{CorruptReason, Error, key_display};
use crate::item::{Item, MAX_ITEM_BYTES, Nulls};
use crate::key::{Key, MAX_PARTITION_KEY_BYTES, MAX_SORT_KEY_BYTES, check_key_value};

/// The string attribute `name` of `item`, if it is one.
pub(crate) fn string_attr<'a>(item: &'a Item, name: &str) -> Option<&'a str> {
    match item.get(name) {
        Some(AttributeValue::S(s)) => Some(s),
        _ => None,
    }
}

/// The stored key of `item` in table `T`, as errors show it.
pub(crate) fn stored_key<T: Table>(item: &Item) -> String {
    let text = |attr| string_attr(item, attr);
    key_display(text(T::PK), T::SK.and_then(text))
}

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

/// Removes the table's key, index-key and entity-type attributes (and update markers) from a
/// stored item, so that only the entity's fields are left to deserialize; returns the stored
/// partition and sort key.
pub(crate) fn strip_bookkeeping<T: Table>(item: &mut Item) -> (Option<String>, Option<String>) {
    strip_markers(item);
    let text = |v: Option<AttributeValue>| match v {
        Some(AttributeValue::S(s)) => Some(s),
        _ => None,
    };
    let pk = text(item.remove(T::PK));
    let sk = text(T::SK.and_then(|a| item.remove(a)));
    if let Some(type_attr) = T::TYPE_ATTR {
        item.remove(type_attr);
    }
    // A multi-attribute index is keyed by the entities' own fields: nothing to remove.
    for index in T::INDEXES.iter().filter(|i| !i.is_multi()) {
        item.remove(index.pk);
        if let Some(sk) = index.sk {
            item.remove(sk);
        }
    }
    (pk, sk)
}

/// Which members of `E`'s items keep a `None` as `NULL` (the others are left out).
fn nulls_of<E: Entity>() -> Nulls {
    Nulls {
        all: <E::Table as Table>::NONE_AS_NULL,
        fields: E::NULL_ATTRS,
        absent: Some(E::ABSENT_ATTRS),
    }
}

/// The item of an entity's fields only (no keys, no bookkeeping), a `None` left out or
/// `NULL` as the entity declares.
pub(crate) fn entity_fields<E: Entity>(entity: &E) -> Result<Item, Error> {
    crate::item::to_fields(entity, nulls_of::<E>())
        .map_err(|source| Error::Serialize { entity: E::NAME.to_owned(), source })
}

/// Converts an entity into the item to store: its fields (through serde), the table and index
/// keys, and the entity type. `version` replaces the stored version attribute when given.
///
/// Checks every limit before returning: key sizes, no empty keys, no field colliding with a
/// key attribute, the item size.
///
/// The timestamp fields are written as the value holds them; the library's writes use
/// `to_item_at`, which sets them from the write's clock.
///
/// An entity with encrypted or signed fields (`#[encrypt]`, `#[sign_only]`) is refused
/// ([`Error::Encryption`]): its items are made by the `Db` that encrypts them.
pub fn to_item<E: Entity>(entity: &E, version: Option<u64>) -> Result<Item, Error> {
    to_item_with(entity, version, None)
}

/// [`to_item`] for a write of `stamp`: the timestamp fields hold the values the write sets
/// (see [`Stamp`]).
pub(crate) fn to_item_at<E: Entity>(
    entity: &E,
    version: Option<u64>,
    stamp: Stamp,
) -> Result<Item, Error> {
    to_item_with(entity, version, Some(stamp))
}

pub(crate) fn to_item_with<E: Entity>(
    entity: &E,
    version: Option<u64>,
    stamp: Option<Stamp>,
) -> Result<Item, Error> {
    // The writers of sealed items (put, batch, transaction) call `to_item_keyed` and encrypt;
    // every other writer (trees, edges, the public `to_item`) would store plaintext.
    super::crypto::refuse_sealed::<E>("to_item")?;
    to_item_keyed(entity, &entity.key(), version, stamp)
}

/// [`to_item_with`] for a caller that holds the entity's key already.
pub(crate) fn to_item_keyed<E: Entity>(
    entity: &E,
    key: &Key<E>,
    version: Option<u64>,
    stamp: Option<Stamp>,
) -> Result<Item, Error> {
    // The entity's validation first: a refused value is not converted, nothing is sent.
    super::rules::validate(entity, key)?;
    if let Some(field) = entity.unset_generated() {
        let problem = crate::error::RequestProblem::IdNotGenerated { entity: E::NAME };
        return Err(Error::InvalidRequest { path: field.to_owned(), problem });
    }
    // Before serializing: serde refuses some out-of-range times with a message of its own.
    let expiry = entity.expiry_secs()?;
    let mut item = entity_fields(entity)?;
    if let Some(attr) = item.keys().find(|k| k.starts_with(MARKER_PREFIX)) {
        return Err(Error::AttributeCollision { entity: E::NAME, attribute: attr.clone() });
    }
    // Fields read back from the keys are stored only there.
    for attr in E::FROM_KEY_ATTRS {
        item.remove(*attr);
    }
    key.validate()?;
    // Room for what is added below (keys, entity type, index keys, version) at once: growing
    // the map on the way rehashes every attribute, once or twice per item.
    item.reserve(4 + 2 * <E::Table as Table>::INDEXES.len() + E::CONSTANTS.len());

    let reserved = |item: &mut Item, attr: &str, value: AttributeValue| -> Result<(), Error> {
        match item.insert(attr.to_owned(), value) {
            None => Ok(()),
            Some(_) => {
                Err(Error::AttributeCollision { entity: E::NAME, attribute: attr.to_owned() })
            }
        }
    };
    let text = |s: &str| AttributeValue::S(s.to_owned());
    reserved(&mut item, <E::Table as Table>::PK, text(key.pk()))?;
    if let (Some(attr), Some(sk)) = (<E::Table as Table>::SK, key.sk()) {
        reserved(&mut item, attr, text(sk))?;
    }
    if let Identity::Tagged(tag) = E::IDENTITY {
        reserved(&mut item, tag.attr, text(tag.value))?;
    }
    for constant in E::CONSTANTS {
        reserved(&mut item, constant.attr, text(constant.value))?;
    }
    if let Some((attr, version)) = super::schema::schema_attr_value::<E>() {
        reserved(&mut item, attr, version)?;
    }

    let mut index_result = Ok(());
    entity.index_keys(&mut |index, pk, sk| {
        if index_result.is_err() {
            return;
        }
        index_result = check_key_value(E::NAME, index.pk, &pk, MAX_PARTITION_KEY_BYTES)
            .and_then(|()| reserved(&mut item, index.pk, AttributeValue::S(pk)))
            .and_then(|()| match (index.sk, sk) {
                (Some(attr), Some(sk)) => check_key_value(E::NAME, attr, &sk, MAX_SORT_KEY_BYTES)
                    .and_then(|()| reserved(&mut item, attr, AttributeValue::S(sk))),
                _ => Ok(()),
            });
    })?;
    index_result?;
    // Multi-attribute indexes are keyed by fields: a `None` (serde's `NULL`) is no attribute
    // (the item is left out of the index), and the values must be keys DynamoDB takes.
    super::index_attr::check_index_values::<E::Table>(E::NAME, &mut item)?;
    // Vector index attributes: a `None` is no attribute, a vector has the index's length.
    super::vector::check_vector_values::<E::Table>(E::NAME, &mut item)?;

    if let (Some(def), Some(v)) = (E::VERSION, version) {
        item.insert(def.attr.to_owned(), AttributeValue::N(v.to_string()));
    }
    if let Some(stamp) = stamp {
        entity.stamp_item(stamp, &mut item)?;
    }
    if let Some(ttl) = E::TTL {
        ttl.encode_item(&mut item, expiry);
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
/// never reach the struct. A strict entity's item holding other attributes is
/// [`Error::CorruptItem`]; the entity's `after_read` hook runs on the value last.
///
/// An entity with encrypted or signed fields (`#[encrypt]`, `#[sign_only]`) is refused
/// ([`Error::Encryption`]): its items are verified and decrypted by the `Db` that reads them.
pub fn from_item<E: Entity>(item: Item) -> Result<E, Error> {
    super::crypto::refuse_sealed::<E>("from_item")?;
    from_opened_item(item)
}

/// [`from_item`] of an item that is `E`'s in plaintext: not sealed, or verified and decrypted.
pub(crate) fn from_opened_item<E: Entity>(mut item: Item) -> Result<E, Error> {
    if let Err(found) = identify::<E>(&item) {
        let key = stored_key::<E::Table>(&item);
        return Err(Error::WrongEntityType { expected: E::NAME, found, key });
    }
    // An item of an older schema version is upgraded on the raw item, before anything else
    // reads its attributes (an old shape often does not deserialize into the new struct).
    super::schema::upgrade_item::<E>(&mut item)?;
    super::rules::check_strict::<E>(&item, || stored_key::<E::Table>(&item))?;
    let mut from_keys = Vec::new();
    E::key_field_values(&item, &mut from_keys)?;

    let (stored_pk, stored_sk) = strip_bookkeeping::<E::Table>(&mut item);
    strip_identity::<E>(&mut item);
    for attr in E::BOOKKEEPING_ATTRS {
        item.remove(*attr);
    }
    if super::crypto::is_sealed::<E>() {
        for attr in super::crypto::SDK_ATTRS {
            item.remove(attr);
        }
    }
    for (attr, value) in from_keys {
        item.insert(attr.to_owned(), value);
    }
    // Only an error shows the key: it is formatted then, not for every item read.
    let key = || key_display(stored_pk.as_deref(), stored_sk.as_deref());
    let unreadable = |source| Error::Deserialize { entity: E::NAME, key: key(), source };
    if let Some(ttl) = E::TTL {
        ttl.decode_item(&mut item).map_err(unreadable)?;
    }
    let mut entity: E = crate::item::from_fields(item).map_err(unreadable)?;

    let computed = entity.key();
    let stored_at = |key: &crate::key::Key<E>| {
        stored_pk.as_deref() == Some(key.pk()) && stored_sk.as_deref() == key.sk()
    };
    // A re-keyed entity's item may be its old copy, under the old layout's key.
    let old_copy = || {
        E::REKEY.is_some()
            && E::rekey_key(&computed, true).ok().flatten().is_some_and(|k| stored_at(&k))
    };
    if !stored_at(&computed) && !old_copy() {
        return Err(Error::CorruptItem {
            entity: E::NAME,
            key: key(),
            reason: CorruptReason::KeyMismatch {
                expected: key_display(Some(computed.pk()), computed.sk()),
            },
        });
    }
    super::rules::after_read(&mut entity, &computed)?;
    Ok(entity)
}

/// Removes the attributes that tell `E`'s items apart: its own tag and its constants (the
/// table's type attribute goes with the other bookkeeping).
pub(crate) fn strip_identity<E: Entity>(item: &mut Item) {
    if let Identity::Tagged(tag) = E::IDENTITY {
        item.remove(tag.attr);
    }
    strip_constants::<E>(item);
}

/// Removes `E`'s constant attributes (from a copy of its item that is not its item: a tree
/// node's copy, an edge's inverse item).
pub(crate) fn strip_constants<E: Entity>(item: &mut Item) {
    for constant in E::CONSTANTS {
        item.remove(constant.attr);
    }
}

/// Whether `item` holds each of `E`'s constant attributes with its value.
pub(crate) fn has_constants<E: Entity>(item: &Item) -> bool {
    E::CONSTANTS.iter().all(|c| string_attr(item, c.attr) == Some(c.value))
}

/// Whether `item` is one of `E`'s items ([`Identity`]): it carries `E`'s tag, or, for an
/// entity told apart by its keys, its keys parse with `E`'s templates and it carries no tag
/// of the table's type attribute; and it holds `E`'s constants. `Err` holds the entity type
/// the item names instead, if any (`None` also for an item of `E`'s type without one of
/// its constants).
pub(crate) fn identify<E: Entity>(item: &Item) -> Result<(), Option<String>> {
    identify_type::<E>(item)?;
    if has_constants::<E>(item) { Ok(()) } else { Err(None) }
}

/// [`identify`] without the constants: for items a server-side filter has checked them on.
pub(crate) fn identify_type<E: Entity>(item: &Item) -> Result<(), Option<String>> {
    match E::IDENTITY {
        Identity::Tagged(tag) => match item.get(tag.attr) {
            Some(AttributeValue::S(t)) if t == tag.value => Ok(()),
            Some(AttributeValue::S(t)) => Err(Some(t.clone())),
            _ => Err(None),
        },
        Identity::Keys => {
            if let Some(attr) = <E::Table as Table>::TYPE_ATTR
                && let Some(AttributeValue::S(t)) = item.get(attr)
            {
                return Err(Some(t.clone()));
            }
            let pk = string_attr(item, <E::Table as Table>::PK).ok_or(None)?;
            let sk = <E::Table as Table>::SK.and_then(|a| string_attr(item, a));
            E::parse_key(pk, sk).map(drop).map_err(|_| None)
        }
    }
}

/// True when `item` is one of `E`'s items (see [`identify`]).
pub(crate) fn is_entity_item<E: Entity>(item: &Item) -> bool {
    identify::<E>(item).is_ok()
}

/// True when `item` is of `E`'s type, its constants aside (see [`identify_type`]): the test
/// of items a query's or a scan's filter kept, whose projection may leave the constants out.
pub(crate) fn is_entity_type_item<E: Entity>(item: &Item) -> bool {
    identify_type::<E>(item).is_ok()
}

// Defined here rather than in `error`, which sits below the entity layer.
impl Error {
    /// The stored item carried by a failed conditional write, read as entity `E`.
    pub fn current<E: Entity>(&self) -> Option<Result<E, Error>> {
        self.current_item().map(|item| from_item::<E>(item.clone()))
    }
}
