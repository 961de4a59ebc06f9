//! The old key layout of a re-keyed entity (`#[entity(rekey(pk = "..", sk = ".."))]`), and
//! how a read tells an item's two copies apart.

use super::{Entity, Table, string_attr};
use crate::item::Item;
use crate::key::Key;

/// The key layout an entity's items are re-keyed from, declared with
/// `#[entity(pk = "NEW#<id>", rekey(pk = "OLD#<id>"))]` and moved by
/// [`Db::rekey`](crate::Db::rekey) (see the re-keying chapter of the guide (`docs/rekeying.md`)). The old
/// layout has the same placeholders as the entity's key, so each key maps to one key of the
/// other layout ([`Entity::rekey_key`](crate::Entity::rekey_key)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RekeyDef {
    /// The old partition key template.
    pub pk: &'static str,
    /// The old sort key template (on an entity with a sort key).
    pub sk: Option<&'static str>,
    /// The stored names of the entity's fields: a copy is conditioned on each being as read.
    pub attrs: &'static [&'static str],
    /// False when a `#[serde(flatten)]` field stores attributes the list cannot name.
    pub complete: bool,
}

/// What a read needs to tell the two copies of a re-keyed entity's item apart: the entity's
/// name (the handle's phase for it says which copy to read) and which layout wrote an item's
/// table key. Made by [`rekey_copies`]; generated collections list one per variant.
#[doc(hidden)]
#[derive(Debug, Clone, Copy)]
pub struct RekeyCopies {
    /// The entity's name ([`Entity::NAME`]).
    pub entity: &'static str,
    /// True for an item under a key the old layout wrote.
    pub is_old: fn(&Item) -> bool,
    /// True for an item under a key the entity's own layout wrote.
    pub is_new: fn(&Item) -> bool,
}

/// The [`RekeyCopies`] of `E`, `None` for an entity that declares no `rekey`.
#[doc(hidden)]
pub const fn rekey_copies<E: Entity>() -> Option<RekeyCopies> {
    if E::REKEY.is_none() {
        return None;
    }
    Some(RekeyCopies {
        entity: E::NAME,
        is_old: written_by::<E, true>,
        is_new: written_by::<E, false>,
    })
}

/// True when one of `copies` is a re-keyed entity's.
#[doc(hidden)]
pub const fn any_rekeyed(copies: &[Option<RekeyCopies>]) -> bool {
    let mut i = 0;
    while i < copies.len() {
        if copies[i].is_some() {
            return true;
        }
        i += 1;
    }
    false
}

/// True when `item`'s table key is one the old layout (`OLD`) or the entity's own wrote: it
/// maps to a key of the other layout.
fn written_by<E: Entity, const OLD: bool>(item: &Item) -> bool {
    let text = |attr| string_attr(item, attr).map(str::to_owned);
    let Some(pk) = text(<E::Table as Table>::PK) else { return false };
    let sk = match <E::Table as Table>::SK {
        Some(attr) => match text(attr) {
            Some(sk) => Some(sk),
            None => return false,
        },
        None => None,
    };
    matches!(E::rekey_key(&Key::<E>::from_parts(pk, sk), !OLD), Ok(Some(_)))
}
