//! An entity's data rules (issue 28): the **one** list of the attribute names the library
//! owns on an entity's items ([`is_library_attr`]), strict reads
//! (`#[entity(strict)]`, [`check_strict`]) and the per-entity hooks
//! (`#[entity(validate = ..)]`, `#[entity(after_read = ..)]`), with what keeps a hook from
//! changing what the library owns.

use super::codec::MARKER_PREFIX;
use super::entity::Entity;
use super::table::{Table, attribute_role};
use crate::error::{CorruptReason, Error, HookProblem, UpgradeError};
use crate::item::Item;
use crate::key::Key;

/// An entity's validation, as the derive stores it (`Entity::VALIDATE`): the user's
/// function, its error boxed.
#[doc(hidden)]
pub type ValidateFn<E> = fn(&E) -> Result<(), UpgradeError>;

/// True when `attr` on an item of `E` is the library's rather than a field's: a key
/// attribute of the table or of one of its indexes written from templates, the table's and
/// the entity's type attribute, a constant, the schema version, the table's Time to Live
/// attribute, a layer's bookkeeping (`BOOKKEEPING_ATTRS`: a tree's revision, child count and
/// interval), an update's marker, and on a sealed entity's items the encryption SDK's header
/// and footer (`crypto::SDK_ATTRS`). The version and timestamp fields are fields.
pub(crate) fn is_library_attr<E: Entity>(attr: &str) -> bool {
    type T<E> = <E as Entity>::Table;
    attribute_role::<T<E>>(attr) != 0
        || E::IDENTITY.tag().is_some_and(|tag| tag.attr == attr)
        || E::CONSTANTS.iter().any(|c| c.attr == attr)
        || (E::SCHEMA.is_some() && attr == T::<E>::SCHEMA_ATTR)
        || T::<E>::TTL == Some(attr)
        || E::BOOKKEEPING_ATTRS.contains(&attr)
        || attr.starts_with(MARKER_PREFIX)
        || (super::crypto::is_sealed::<E>() && super::crypto::SDK_ATTRS.contains(&attr))
}

/// For a strict entity (`#[entity(strict)]`): every attribute of the stored `item` is a
/// field's (its stored name or a serde alias) or the library's ([`is_library_attr`]);
/// otherwise [`Error::CorruptItem`] with [`CorruptReason::UnknownAttributes`] naming the
/// others, sorted. A no-op for an entity that is not strict.
pub(crate) fn check_strict<E: Entity>(
    item: &Item,
    key: impl FnOnce() -> String,
) -> Result<(), Error> {
    let Some(fields) = E::STRICT else {
        return Ok(());
    };
    let mut unknown: Vec<String> = item
        .keys()
        .filter(|attr| !fields.contains(&attr.as_str()) && !is_library_attr::<E>(attr))
        .cloned()
        .collect();
    if unknown.is_empty() {
        return Ok(());
    }
    unknown.sort_unstable();
    Err(Error::CorruptItem {
        entity: E::NAME,
        key: key(),
        reason: CorruptReason::UnknownAttributes { attributes: unknown },
    })
}

/// Runs `E`'s validation (`#[entity(validate = ..)]`) on a value about to be written: its
/// error is [`Error::Hook`] with [`HookProblem::Invalid`], and nothing is sent.
pub(crate) fn validate<E: Entity>(entity: &E, key: &Key<E>) -> Result<(), Error> {
    match E::VALIDATE {
        Some(validate) => validate(entity).map_err(|source| Error::Hook {
            entity: E::NAME,
            key: key.to_string(),
            problem: HookProblem::Invalid { source },
        }),
        None => Ok(()),
    }
}

/// Runs `E`'s transformation after read (`#[entity(after_read = ..)]`) on a value just read
/// whose stored key is `stored`: the hook may change fields, not the key (partition and sort)
/// or the version, which are checked unchanged afterwards ([`Error::Hook`] with
/// [`HookProblem::KeyChanged`] or [`HookProblem::VersionChanged`]).
pub(crate) fn after_read<E: Entity>(entity: &mut E, stored: &Key<E>) -> Result<(), Error> {
    let Some(hook) = E::AFTER_READ else {
        return Ok(());
    };
    let version = entity.version();
    hook(entity);
    let problem = {
        let now = entity.key();
        if now.pk() != stored.pk() || now.sk() != stored.sk() {
            HookProblem::KeyChanged { changed: now.to_string() }
        } else if entity.version() != version {
            HookProblem::VersionChanged {
                stored: version.unwrap_or_default(),
                changed: entity.version().unwrap_or_default(),
            }
        } else {
            return Ok(());
        }
    };
    Err(Error::Hook { entity: E::NAME, key: stored.to_string(), problem })
}

/// [`after_read`] on a value read from an item of another form than its own (a closure
/// tree's copy, an edge's inverse item): the key checked unchanged is the value's own.
pub(crate) fn after_read_copy<E: Entity>(entity: &mut E) -> Result<(), Error> {
    if E::AFTER_READ.is_none() {
        return Ok(());
    }
    let key = entity.key();
    after_read(entity, &key)
}

/// The boxed error of a validation hook: what the derive's `VALIDATE` wraps the user's
/// error in.
#[doc(hidden)]
pub fn hook_error<X: std::error::Error + Send + Sync + 'static>(error: X) -> UpgradeError {
    Box::new(error)
}
