//! The old key layout of a re-keyed entity (`#[entity(rekey(pk = "..", sk = ".."))]`).

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
