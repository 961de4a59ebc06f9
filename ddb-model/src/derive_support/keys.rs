//! Key templates as data: the derive writes an entity's templates down once
//! ([`EntityKeys`], [`IndexKeys`]); every key is built and read back by the generic code here.

use std::borrow::Cow;
use std::marker::PhantomData;

// Through the crate root's re-exports: this module depends only on the public layout.
use crate::key::{IndexArg, KeyArg, KeyReader, escape_into};
use crate::ops::{KeyStart, LevelQuery, OnIndex};
use crate::{Db, Entity, Error, IndexDef, Key, Table};

/// One run of a key template: literal text, or the placeholder of part `n` (an index into the
/// parts the caller passes, numbered by first appearance).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeySeg {
    /// Literal text, written as it is.
    Lit(&'static str),
    /// A placeholder: the text of part `n`, escaped.
    Field(usize),
}

/// `KeySeg::Lit(text)`.
pub const fn lit(text: &'static str) -> KeySeg {
    KeySeg::Lit(text)
}

/// `KeySeg::Field(n)`.
pub const fn part(n: usize) -> KeySeg {
    KeySeg::Field(n)
}

/// A key template as the derive parsed it (`"USER#<id>"`).
#[derive(Debug, Clone, Copy)]
pub struct KeyTemplate {
    /// The template as written, for error messages.
    pub text: &'static str,
    /// The runs of the template, in order.
    pub segs: &'static [KeySeg],
    /// The room a key of the template is given up front: its literal runs and 16 bytes per
    /// placeholder.
    capacity: usize,
}

impl KeyTemplate {
    /// The template `text`, parsed into `segs`.
    pub const fn new(text: &'static str, segs: &'static [KeySeg]) -> Self {
        let (mut capacity, mut i) = (0, 0);
        while i < segs.len() {
            capacity += match segs[i] {
                KeySeg::Lit(lit) => lit.len(),
                KeySeg::Field(_) => 16,
            };
            i += 1;
        }
        KeyTemplate { text, segs, capacity }
    }

    /// The key: literal runs as written, the text of each part escaped. One allocation unless
    /// the parts are long.
    #[inline(always)]
    pub fn write<P: PartText>(&self, parts: &[P]) -> String {
        let mut key = String::with_capacity(self.capacity);
        for seg in self.segs {
            match *seg {
                KeySeg::Lit(lit) => key.push_str(lit),
                KeySeg::Field(n) => escape_into(parts.get(n).map_or("", P::text), &mut key),
            }
        }
        key
    }

    /// The literal text before the first placeholder (all of it without placeholders): where
    /// a query of the template's keys starts.
    pub fn base(&self) -> &'static str {
        match self.segs.first() {
            Some(KeySeg::Lit(lit)) => lit,
            _ => "",
        }
    }
}

/// The text of a key part: a field's key text, or an index key field's (`None` when the
/// field is an empty `Option`, and the item not in the index: never written).
pub trait PartText {
    /// The text, before escaping.
    fn text(&self) -> &str;
}

impl PartText for Cow<'_, str> {
    #[inline]
    fn text(&self) -> &str {
        self
    }
}

impl PartText for Option<Cow<'_, str>> {
    #[inline]
    fn text(&self) -> &str {
        self.as_deref().unwrap_or_default()
    }
}

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
        let sk = self.sk.as_ref().map(|sk| sk.write(parts));
        Key::from_parts(self.partition(parts), sk)
    }

    /// The partition key; `parts` holds at least the fields of the partition-key template
    /// (they come first in `E::KeyFields`).
    #[inline]
    pub fn partition(&self, parts: &[Cow<'_, str>]) -> String {
        self.pk.write(parts)
    }

    /// A query of the partition `parts` on the table, its sort key fixed level by level.
    pub fn levels<'a>(&self, db: &'a Db<E::Table>, parts: &[Cow<'_, str>]) -> LevelQuery<'a, E> {
        let base = self.sk.as_ref().map_or("", KeyTemplate::base);
        LevelQuery::new(db, KeyStart::new(None, self.partition(parts), base))
    }

    /// A reader of a stored partition key. The generated `parse_key` reads the template's
    /// runs with it in order (`lit`, `part`, `repeated`), then `end`.
    #[inline]
    pub fn read_pk<'i>(&self, pk: &'i str) -> KeyReader<'i> {
        KeyReader::new(E::NAME, <E::Table as Table>::PK, self.pk.text, pk)
    }

    /// A reader of a stored sort key; the error for a missing one.
    #[inline]
    pub fn read_sk<'i>(&self, sk: Option<&'i str>) -> Result<KeyReader<'i>, Error> {
        let attr = <E::Table as Table>::SK.unwrap_or("sk");
        let template = self.sk.as_ref().map_or("", |t| t.text);
        match sk {
            Some(sk) => Ok(KeyReader::new(E::NAME, attr, template, sk)),
            None => Err(KeyReader::missing(E::NAME, attr, template)),
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
        let sk = self.sk.as_ref().map(|sk| sk.write(parts));
        sink(def, self.pk.write(parts), sk);
    }

    /// A query of the partition `parts` on this index, its sort key fixed level by level.
    pub fn levels<'a, E: Entity>(
        &self,
        db: &'a Db<E::Table>,
        parts: &[Cow<'_, str>],
    ) -> LevelQuery<'a, E, OnIndex> {
        let pk = self.pk.write(parts);
        let base = self.sk.as_ref().map_or("", KeyTemplate::base);
        LevelQuery::new(db, KeyStart::on_index(self.def, self.name, pk, base))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_write_escaped_parts() {
        let t = KeyTemplate::new(
            "A#<a>#B#<b>",
            &[KeySeg::Lit("A#"), KeySeg::Field(0), KeySeg::Lit("#B#"), KeySeg::Field(1)],
        );
        let parts = [Cow::Borrowed("x#y"), Cow::Owned("7".to_owned())];
        assert_eq!(t.write(&parts), "A#x%23y#B#7");
        assert_eq!(t.base(), "A#");
    }
}
