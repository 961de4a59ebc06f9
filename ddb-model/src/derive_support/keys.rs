//! Key templates as data: the derive writes an entity's templates down once
//! ([`EntityKeys`], [`IndexKeys`]); every key is built and read back by the generic code here.

use std::borrow::Cow;
use std::marker::PhantomData;

use super::levels::LevelQuery;
use crate::db::Db;
use crate::entity::Entity;
use crate::error::Error;
use crate::key::{IndexArg, Key, KeyArg, KeyPartFns, KeyReader, escape_into};
use crate::ops::{KeyStart, OnIndex};
use crate::table::{IndexDef, Table};

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
}

impl KeyTemplate {
    /// The template `text`, parsed into `segs`.
    pub const fn new(text: &'static str, segs: &'static [KeySeg]) -> Self {
        KeyTemplate { text, segs }
    }

    /// The key: literal runs as written, the text of each part escaped.
    #[inline]
    pub fn write<'p>(&self, text: impl Fn(usize) -> &'p str) -> String {
        let len = self
            .segs
            .iter()
            .map(|seg| match *seg {
                KeySeg::Lit(lit) => lit.len(),
                KeySeg::Field(n) => text(n).len(),
            })
            .sum();
        let mut key = String::with_capacity(len);
        for seg in self.segs {
            match *seg {
                KeySeg::Lit(lit) => key.push_str(lit),
                KeySeg::Field(n) => escape_into(text(n), &mut key),
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

/// The part `n` of `parts`, `""` past the end (generated code passes every part).
fn nth<'p>(parts: &'p [Cow<'_, str>], n: usize) -> &'p str {
    parts.get(n).map_or("", |p| p)
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
    /// The key fields in the order of `E::KeyFields`, for error messages.
    pub fields: &'static [&'static str],
    _entity: PhantomData<fn() -> E>,
}

impl<E> Clone for EntityKeys<E> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<E> Copy for EntityKeys<E> {}

impl<E: Entity> EntityKeys<E> {
    /// The templates of `E`, its key fields named in the order of `E::KeyFields`.
    pub const fn new(
        pk: KeyTemplate,
        sk: Option<KeyTemplate>,
        fields: &'static [&'static str],
    ) -> Self {
        EntityKeys { pk, sk, fields, _entity: PhantomData }
    }

    /// The key with these key-field texts (in the order of `E::KeyFields`).
    #[inline]
    pub fn key(&self, parts: &[Cow<'_, str>]) -> Key<E> {
        let sk = self.sk.as_ref().map(|sk| sk.write(|n| nth(parts, n)));
        Key::from_parts(self.partition(parts), sk)
    }

    /// The partition key; `parts` holds at least the fields of the partition-key template
    /// (they come first in `E::KeyFields`).
    #[inline]
    pub fn partition(&self, parts: &[Cow<'_, str>]) -> String {
        self.pk.write(|n| nth(parts, n))
    }

    /// A query of the partition `parts` on the table, its sort key fixed level by level.
    pub fn levels<'a>(&self, db: &'a Db<E::Table>, parts: &[Cow<'_, str>]) -> LevelQuery<'a, E> {
        let base = self.sk.as_ref().map_or("", KeyTemplate::base);
        LevelQuery::new(db, KeyStart::new(None, self.partition(parts), base))
    }

    /// Reads the key fields of a stored key, one [`KeyParser::part`] per field.
    #[inline]
    pub fn parser<'i>(&self, pk: &'i str, sk: Option<&'i str>) -> KeyParser<'i, E> {
        KeyParser {
            keys: *self,
            reader: KeyReader::new(E::NAME, <E::Table as Table>::PK, self.pk.text, pk),
            sk,
            on_sk: false,
            seg: 0,
        }
    }
}

/// Reads a stored key back into its fields, following [`EntityKeys`]: the generated
/// `parse_key` asks for each placeholder in template order (`part` for a field's first
/// occurrence, `again` for a repeat) and then calls `end`. Literal runs are checked on the way.
pub struct KeyParser<'i, E> {
    keys: EntityKeys<E>,
    reader: KeyReader<'i>,
    sk: Option<&'i str>,
    on_sk: bool,
    /// The next segment of the current template.
    seg: usize,
}

impl<'i, E: Entity> KeyParser<'i, E> {
    fn template(&self) -> Option<&KeyTemplate> {
        if self.on_sk { self.keys.sk.as_ref() } else { Some(&self.keys.pk) }
    }

    /// The sort-key attribute of the table, for messages.
    fn sk_attr() -> &'static str {
        <E::Table as Table>::SK.unwrap_or("sk")
    }

    /// Finishes the partition key and starts on the sort key (an error when it is missing).
    fn start_sort_key(&mut self) -> Result<(), Error> {
        let Some(sk) = self.keys.sk else {
            return Ok(());
        };
        let input = self.sk.unwrap_or_default();
        let reader = KeyReader::new(E::NAME, Self::sk_attr(), sk.text, input);
        let pk = std::mem::replace(&mut self.reader, reader);
        pk.end()?;
        (self.on_sk, self.seg) = (true, 0);
        match self.sk {
            Some(_) => Ok(()),
            None => Err(KeyReader::missing(E::NAME, Self::sk_attr(), sk.text)),
        }
    }

    /// Checks literal runs up to the next placeholder; its field name and the separator that
    /// ends its value.
    fn next_field(&mut self) -> Result<(&'static str, Option<char>), Error> {
        loop {
            let template = self.template().copied().unwrap_or(self.keys.pk);
            match template.segs.get(self.seg) {
                Some(KeySeg::Lit(lit)) => {
                    self.reader.lit(lit)?;
                    self.seg += 1;
                }
                Some(KeySeg::Field(n)) => {
                    self.seg += 1;
                    let until = match template.segs.get(self.seg) {
                        Some(KeySeg::Lit(lit)) => lit.chars().next(),
                        _ => None,
                    };
                    return Ok((self.keys.fields.get(*n).copied().unwrap_or_default(), until));
                }
                None if !self.on_sk && self.keys.sk.is_some() => self.start_sort_key()?,
                None => {
                    // More fields asked for than the templates hold: generated code never does.
                    return Err(KeyReader::missing(E::NAME, Self::sk_attr(), template.text));
                }
            }
        }
    }

    /// The next placeholder, the first occurrence of its field.
    #[inline]
    pub fn part<T>(&mut self, fns: KeyPartFns<T>) -> Result<T, Error> {
        let (field, until) = self.next_field()?;
        self.reader.part(field, until, fns)
    }

    /// The next placeholder, a repeat of a field read already as `first`.
    pub fn again<T>(&mut self, fns: KeyPartFns<T>, first: &T) -> Result<(), Error> {
        let (field, until) = self.next_field()?;
        self.reader.repeated(field, until, fns, first)
    }

    /// Checks the literal runs after the last placeholder and that nothing follows them.
    pub fn end(mut self) -> Result<(), Error> {
        while let Some(template) = self.template().copied() {
            match template.segs.get(self.seg) {
                Some(KeySeg::Lit(lit)) => {
                    self.reader.lit(lit)?;
                    self.seg += 1;
                }
                Some(KeySeg::Field(_)) => {
                    // Fewer fields read than the templates hold: the generated code never does.
                    return Err(KeyReader::missing(E::NAME, Self::sk_attr(), template.text));
                }
                None if self.on_sk => break,
                None if self.keys.sk.is_none() => break,
                None => self.start_sort_key()?,
            }
        }
        self.reader.end()
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
        let part = |n: usize| parts.get(n).and_then(Option::as_deref).unwrap_or_default();
        let sk = self.sk.as_ref().map(|sk| sk.write(part));
        sink(def, self.pk.write(part), sk);
    }

    /// A query of the partition `parts` on this index, its sort key fixed level by level.
    pub fn levels<'a, E: Entity>(
        &self,
        db: &'a Db<E::Table>,
        parts: &[Cow<'_, str>],
    ) -> LevelQuery<'a, E, OnIndex> {
        let pk = self.pk.write(|n| nth(parts, n));
        let base = self.sk.as_ref().map_or("", KeyTemplate::base);
        LevelQuery::new(db, KeyStart::on_index(self.def, self.name, pk, base))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_write_escaped_parts() {
        let t = KeyTemplate {
            text: "A#<a>#B#<b>",
            segs: &[KeySeg::Lit("A#"), KeySeg::Field(0), KeySeg::Lit("#B#"), KeySeg::Field(1)],
        };
        let parts = ["x#y", "7"];
        assert_eq!(t.write(|n| parts[n]), "A#x%23y#B#7");
        assert_eq!(t.base(), "A#");
    }
}
