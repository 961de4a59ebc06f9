//! What an update writes and its guard: the caller's actions plus the index keys that
//! follow the fields set, `updated_at`, checked key-like values, and for an upsert the
//! attributes of a created item; rendered as the update expression and guarded condition.

use aws_sdk_dynamodb::types::AttributeValue;

use super::Update;
use crate::error::{CorruptReason, Error, RequestProblem, UpsertReason};
use crate::expr::{ExprBuilder, Node, PathSegment, Touch, UpdateActions};
use crate::key::{Key, MAX_PARTITION_KEY_BYTES, MAX_SORT_KEY_BYTES, check_key_value};
use crate::model::{Entity, Stamp, from_opened_item};
use crate::ops::{Guard, Rendered, WriteKind, check_expected_version, key_item};

/// The actions of an update of `key` plus the index keys it rewrites because it changes
/// fields they are made of (see [`Entity::index_key_updates`]), and the names of those key
/// attributes.
///
/// For an upsert (`upsert`), a field given only with `set_if_not_exists` does not count as
/// changed: a created item gets the keys of those values (written with `if_not_exists`, like
/// the fields), an existing one keeps both its fields and its keys.
pub(crate) fn with_index_keys<E: Entity>(
    key: &Key<E>,
    actions: &UpdateActions<E>,
    upsert: bool,
) -> Result<(UpdateActions<E>, Vec<&'static str>), Error> {
    let mut changes: Vec<(&'static str, Option<String>)> = Vec::new();
    let mut sink = |attr, value| changes.push((attr, value));
    if upsert {
        E::index_key_updates(key, &actions.without_if_not_exists(), &mut sink)?;
    } else {
        E::index_key_updates(key, actions, &mut sink)?;
    }
    let mut out = actions.clone();
    let mut rewritten = Vec::with_capacity(changes.len());
    for (attr, value) in changes {
        out = match value {
            Some(text) => out.set_raw(attr, AttributeValue::S(text)),
            None => out.remove_raw(attr),
        };
        rewritten.push(attr);
    }
    Ok((out, rewritten))
}

impl<'a, E: Entity, R> Update<'a, E, R> {
    /// The actions to send and the guard: the caller's, or for an upsert the caller's plus
    /// the attributes of a created item, guarded like a put (no item, or one of the type).
    pub(crate) fn effective(&self) -> Result<(UpdateActions<E>, WriteKind), Error> {
        let (actions, rewritten) =
            with_index_keys(&self.key, &self.actions, self.upsert.is_some())?;
        let mut actions = vector_values(multi_index_values(actions)?)?;
        // The timestamps: `updated_at` set, `created_at` set only on an item the upsert
        // creates (an update of an existing item leaves it as stored).
        let mut stamps = Vec::new();
        let stamp = self.stamp.unwrap_or_else(|| self.db.stamp(false));
        E::stamp_attrs(stamp, &mut |attr, created, value| {
            stamps.push((attr, created, value));
        })?;
        for (attr, created, value) in &stamps {
            if !created {
                actions = actions.set_raw(attr, value.clone());
            } else if self.upsert.is_some() {
                actions = actions.set_raw_if_not_exists(attr, value.clone());
            }
        }
        let Some(key_values) = self.upsert else {
            return Ok((actions, WriteKind::Update));
        };
        let mut created = key_item(&self.key);
        for (attr, _, value) in stamps {
            created.insert(attr.to_owned(), value);
        }
        // The tag, for an entity that carries one (one told apart by its keys has none).
        if let Some(tag) = E::IDENTITY.tag() {
            let entity_type = AttributeValue::S(tag.value.to_owned());
            created.insert(tag.attr.to_owned(), entity_type.clone());
            actions = actions.set_raw(tag.attr, entity_type);
        }
        // The constants, set as the tag is: an existing item holds them already (the guard).
        for constant in E::CONSTANTS {
            let value = AttributeValue::S(constant.value.to_owned());
            created.insert(constant.attr.to_owned(), value.clone());
            actions = actions.set_raw(constant.attr, value);
        }
        if let Some(names) = self.key_attrs {
            let values = match key_values(&self.key)? {
                AttributeValue::L(values) => values,
                other => vec![other],
            };
            for (n, (name, value)) in names.iter().zip(values).enumerate() {
                // A key field stored as a key attribute itself is written by the key, and a
                // `from_key` field is stored only there.
                if created.contains_key(*name) || E::FROM_KEY_ATTRS.contains(name) {
                    continue;
                }
                // The value given, where its key text keeps less of it (a case-insensitive
                // text's case) than the value read back from the key.
                let value = match self.stored_keys.iter().find(|(i, _)| *i == n) {
                    Some((_, text)) => AttributeValue::S(text.clone()),
                    None => value,
                };
                created.insert((*name).to_owned(), value.clone());
                // An existing item keeps the value it stores (the same key, maybe in
                // another case).
                actions = actions.set_raw_if_not_exists(name, value);
            }
        }
        for (name, value) in self.actions.created_values()? {
            created.insert(name, value);
        }
        if let Some(def) = E::VERSION {
            created.insert(def.attr.to_owned(), AttributeValue::N("1".into()));
        }
        // A created item is of the current schema version; an existing one must be already
        // (the guard), so setting it changes nothing there.
        if let Some((attr, version)) = crate::model::schema_attr_value::<E>() {
            created.insert(attr.to_owned(), version.clone());
            actions = actions.set_raw(attr, version);
        }
        let incomplete = |reason| Error::InvalidRequest {
            path: String::new(),
            problem: RequestProblem::UpsertIncomplete {
                reason,
                keys_unwritten: self.key_attrs.is_none(),
            },
        };
        // In plaintext, for a sealed entity too (it is sealed when it is written).
        let entity: E = from_opened_item(created).map_err(|e| match e {
            Error::Deserialize { entity, key, source } => {
                incomplete(UpsertReason::Unreadable { entity, key, message: source.to_string() })
            }
            Error::CorruptItem { entity, key, reason: CorruptReason::KeyMismatch { expected } } => {
                incomplete(UpsertReason::KeyMismatch { entity, key, expected })
            }
            other => other,
        })?;
        let mut index_keys = Vec::new();
        entity.index_keys(&mut |index, pk, sk| {
            index_keys.push((index.name, index.pk, pk, MAX_PARTITION_KEY_BYTES));
            if let (Some(attr), Some(sk)) = (index.sk, sk) {
                index_keys.push((index.name, attr, sk, MAX_SORT_KEY_BYTES));
            }
        })?;
        for (index, attr, value, max) in index_keys {
            // A key the update rewrites (it sets the key's fields) is written as it says.
            if rewritten.contains(&attr) {
                continue;
            }
            // `if_not_exists` would add the key to an existing item left out of the index.
            if E::SPARSE_INDEXES.contains(&index) {
                return Err(Error::InvalidRequest {
                    path: attr.to_owned(),
                    problem: RequestProblem::UpsertSparseIndex { index },
                });
            }
            check_key_value(E::NAME, attr, &value, max)?;
            actions = actions.set_raw_if_not_exists(attr, AttributeValue::S(value));
        }
        Ok((actions, WriteKind::Upsert))
    }

    /// Refuses a plain update of an entity whose fields are copied elsewhere.
    fn check_copies(&self) -> Result<(), Error> {
        match E::UPDATE_THROUGH {
            Some(through) if !self.copies_handled => Err(Error::InvalidRequest {
                path: String::new(),
                problem: RequestProblem::UpdateCopies { entity: E::NAME, through },
            }),
            _ => Ok(()),
        }
    }

    /// Checks the key and renders the update and its guarded condition, with what the write
    /// pipeline's steps `held`.
    pub(crate) fn prepare(&self, held: Option<&Node>) -> Result<PreparedUpdate<E>, Error> {
        let version = E::VERSION.map(|v| v.attr);
        let (write, (update_expression, idempotent)) = self.rendered(held, |actions, b| {
            Ok((actions.render(b, version)?, actions.is_idempotent()))
        })?;
        Ok(PreparedUpdate { write, update_expression, idempotent })
    }

    /// The one preparation of every shape of update: the checks (copies, key, expected
    /// version), the effective actions rendered by `render`, then the guarded condition.
    /// Returns the rendered write and what `render` made of the actions.
    pub(super) fn rendered<X>(
        &self,
        held: Option<&Node>,
        render: impl FnOnce(&UpdateActions<E>, &mut ExprBuilder) -> Result<X, Error>,
    ) -> Result<(Rendered<E>, X), Error> {
        // An update in place changes signed attributes: the item would no longer verify. A
        // sealed entity's update is a read and a put (`sealed.rs`).
        crate::model::refuse_sealed::<E>("update")?;
        self.guarded(held, render)
    }

    /// [`rendered`](Update::rendered) for any entity, sealed ones included.
    pub(super) fn guarded<X>(
        &self,
        held: Option<&Node>,
        render: impl FnOnce(&UpdateActions<E>, &mut ExprBuilder) -> Result<X, Error>,
    ) -> Result<(Rendered<E>, X), Error> {
        self.check_copies()?;
        self.key.validate()?;
        check_expected_version::<E>(self.expected_version)?;
        let (actions, kind) = self.effective()?;
        let mut b = ExprBuilder::default();
        let rendered = render(&actions, &mut b)?;
        let guard = Guard { kind, expected_version: self.expected_version };
        let write = Rendered::new(b, self.key.clone(), guard, self.condition.as_ref(), held)?;
        Ok((write, rendered))
    }
}

/// An update rendered for the wire.
pub(crate) struct PreparedUpdate<E> {
    pub write: Rendered<E>,
    pub update_expression: String,
    /// No `add` or `append`: applying it twice is applying it once.
    pub idempotent: bool,
}

/// The actions with the values of multi-attribute index keys checked: a field that keys such
/// an index is the key attribute itself, so a value the index cannot hold (empty, too long,
/// of another type) is refused here rather than by the service, and a `None` (which serde
/// writes as `NULL`, a type no key attribute has) removes the attribute: the item leaves the
/// index, as an item put with `None` is not in it.
fn multi_index_values<E: Entity>(mut actions: UpdateActions<E>) -> Result<UpdateActions<E>, Error> {
    for (_, attr, in_pk) in crate::model::multi_index_attrs::<E::Table>() {
        let null = match actions.touch(attr.name) {
            Touch::Set(AttributeValue::Null(_)) => true,
            Touch::Set(v) => {
                crate::model::check_index_value(E::NAME, attr, in_pk, v)?;
                false
            }
            _ => false,
        };
        if null {
            actions = removed_instead(actions, attr.name);
        }
    }
    Ok(actions)
}

/// The actions with the vectors they set checked against their vector indexes (length,
/// finite elements): a `None` (serde's `NULL`, which no vector index takes) removes the
/// attribute instead, and the item leaves the index.
fn vector_values<E: Entity>(mut actions: UpdateActions<E>) -> Result<UpdateActions<E>, Error> {
    for index in <E::Table as crate::model::Table>::VECTOR_INDEXES {
        // The vector, then the filter attributes (of the declared type).
        let attrs = std::iter::once((index.attr, None))
            .chain(index.filters.iter().map(|f| (f.name, Some(f))));
        for (name, filter) in attrs {
            let null = match actions.touch(name) {
                Touch::Set(AttributeValue::Null(_)) => true,
                Touch::Set(v) => {
                    let checked = match filter {
                        None => crate::model::check_vector_value(v, index),
                        Some(filter) => crate::model::check_filter_value(v, filter),
                    };
                    checked.map_err(|problem| Error::InvalidVector {
                        entity: E::NAME,
                        index: index.name,
                        problem,
                    })?;
                    false
                }
                _ => false,
            };
            if null {
                actions = removed_instead(actions, name);
            }
        }
    }
    Ok(actions)
}

/// `actions` with the top-level attribute `name` removed instead of set: what a `None` (serde's
/// `NULL`) written to an attribute that keys an index becomes, so that the item leaves the
/// index.
fn removed_instead<E>(actions: UpdateActions<E>, name: &str) -> UpdateActions<E> {
    actions
        .retain_paths(|p| !matches!(p.segments(), [PathSegment::Name(n)] if n == name))
        .remove_raw(name)
}

/// `actions` with the `updated_at` field set to `stamp`'s time: what a layer that renders an
/// entity's update itself (a closure tree's copies, an edge's two items) adds, as
/// [`Update`] does.
pub(crate) fn with_updated_at<E: Entity>(
    mut actions: UpdateActions<E>,
    stamp: Stamp,
) -> Result<UpdateActions<E>, Error> {
    let mut updated = Vec::new();
    E::stamp_attrs(stamp, &mut |attr, created, value| {
        if !created {
            updated.push((attr, value));
        }
    })?;
    for (attr, value) in updated {
        actions = actions.set_raw(attr, value);
    }
    Ok(actions)
}
