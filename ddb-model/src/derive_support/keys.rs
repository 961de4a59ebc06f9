//! An entity's key templates as data: the derive writes them down once ([`EntityKeys`],
//! [`IndexKeys`]); every key is built and read back by the template runtime
//! ([`KeyTemplate`]), and these types only add what the entity knows (its name, its table's
//! key attributes, its indexes).

use std::borrow::Cow;
use std::marker::PhantomData;

// Through the crate root's re-exports: this module depends only on the public layout.
use crate::key::{IndexArg, KeyArg, KeyReader, KeyTemplate};
use crate::ops::{KeyStart, LevelQuery, OnIndex};
use crate::{Db, Entity, Error, IndexDef, Key, Table};

/// The key text of a `KeyArg` (an argument of a generated constructor).
#[inline]
pub fn key_arg<T>(value: &impl KeyArg<T>) -> Cow<'_, str> {
    value.arg_key_text()
}

/// The key text of an `IndexArg` (an argument of a generated index query constructor).
#[inline]
pub fn index_arg<F>(value: &impl IndexArg<F>) -> Cow<'_, str> {
    value.index_arg_text()
}

/// The primary-key templates of entity `E`.
pub struct EntityKeys<E> {
    /// The partition-key template.
    pub pk: KeyTemplate,
    /// The sort-key template, if the entity has one.
    pub sk: Option<KeyTemplate>,
    _entity: PhantomData<fn() -> E>,
}

impl<E> Clone for EntityKeys<E> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<E> Copy for EntityKeys<E> {}

impl<E: Entity> EntityKeys<E> {
    /// The templates of `E`.
    pub const fn new(pk: KeyTemplate, sk: Option<KeyTemplate>) -> Self {
        EntityKeys { pk, sk, _entity: PhantomData }
    }

    /// The key with these key-field texts (in the order of `E::KeyFields`).
    #[inline]
    pub fn key(&self, parts: &[Cow<'_, str>]) -> Key<E> {
        let sk = self.sk.as_ref().map(|sk| sk.render(parts));
        Key::from_parts(self.partition(parts), sk)
    }

    /// The partition key; `parts` holds at least the fields of the partition-key template
    /// (they come first in `E::KeyFields`).
    #[inline]
    pub fn partition(&self, parts: &[Cow<'_, str>]) -> String {
        self.pk.render(parts)
    }

    /// A query of the partition `parts` on the table, its sort key fixed level by level.
    pub fn levels<'a>(&self, db: &'a Db<E::Table>, parts: &[Cow<'_, str>]) -> LevelQuery<'a, E> {
        let base = self.sk.as_ref().map(KeyTemplate::base).unwrap_or_default();
        LevelQuery::new(db, KeyStart::new(None, self.partition(parts), &base))
    }

    /// A reader of a stored partition key. The generated `parse_key` reads the template's
    /// runs with it in order (`lit`, `part`, `repeated`), then `end`.
    #[inline]
    pub fn read_pk<'i>(&self, pk: &'i str) -> KeyReader<'i> {
        self.pk.reader(E::NAME, <E::Table as Table>::PK, pk)
    }

    /// A reader of a stored sort key; the error for a missing one.
    #[inline]
    pub fn read_sk<'i>(&self, sk: Option<&'i str>) -> Result<KeyReader<'i>, Error> {
        let attr = <E::Table as Table>::SK.unwrap_or("sk");
        match (&self.sk, sk) {
            (Some(template), Some(sk)) => Ok(template.reader(E::NAME, attr, sk)),
            (None, Some(sk)) => Ok(KeyReader::new(E::NAME, attr, "", sk)),
            (template, None) => {
                Err(KeyReader::missing(E::NAME, attr, template.map_or("", |t| t.text())))
            }
        }
    }
}

/// The item's key on one secondary index, from the entity's `#[index]` templates.
#[derive(Debug, Clone, Copy)]
pub struct IndexKeys {
    /// The index in the table; `None` when the table has no such index (a compile-time
    /// assertion reports that, so it never reaches a running program).
    pub def: Option<&'static IndexDef>,
    /// The index name.
    pub name: &'static str,
    /// The index partition-key template.
    pub pk: KeyTemplate,
    /// The index sort-key template, if the index has a sort key.
    pub sk: Option<KeyTemplate>,
}

/// What `Entity::index_keys` hands every index key to.
pub type IndexSink<'a> = dyn FnMut(&'static IndexDef, String, Option<String>) + 'a;

impl IndexKeys {
    /// The templates of the entity's key on index `name` (`def` in the table).
    pub const fn new(
        def: Option<&'static IndexDef>,
        name: &'static str,
        pk: KeyTemplate,
        sk: Option<KeyTemplate>,
    ) -> Self {
        IndexKeys { def, name, pk, sk }
    }

    /// Hands the item's key on this index to `sink`; nothing when a part is `None` (an
    /// optional field left empty: the item is not in the index).
    #[inline]
    pub fn write(&self, parts: &[Option<Cow<'_, str>>], sink: &mut IndexSink<'_>) {
        let Some(def) = self.def else {
            return;
        };
        if parts.iter().any(Option::is_none) {
            return;
        }
        let sk = self.sk.as_ref().map(|sk| sk.render(parts));
        sink(def, self.pk.render(parts), sk);
    }

    /// A query of the partition `parts` on this index, its sort key fixed level by level.
    pub fn levels<'a, E: Entity>(
        &self,
        db: &'a Db<E::Table>,
        parts: &[Cow<'_, str>],
    ) -> LevelQuery<'a, E, OnIndex> {
        let pk = self.pk.render(parts);
        let base = self.sk.as_ref().map(KeyTemplate::base).unwrap_or_default();
        LevelQuery::new(db, KeyStart::on_index(self.def, self.name, pk, &base))
    }
}
