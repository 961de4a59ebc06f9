//! What generated code calls instead of inlining it (`#[derive(Entity)]`), reached through
//! `ddb_model::__private`:
//!
//! - [`EntityKeys`] / [`IndexKeys`]: an entity's key templates written down as data
//!   ([`KeyTemplate`]); one generic writer builds every key from them and one generic reader
//!   ([`KeyParser`]) reads stored keys back, so the derive emits the templates once instead
//!   of a key builder per call site;
//! - [`LevelQuery`]: the state of a query built level by level from a sort-key template. The
//!   generated level types (`StoreQuery<'_, L>`) wrap it and dereference to it, so the methods
//!   that finish a query (`limit`, `all`, `stream`, ...) are written once, here;
//! - [`attr_clash`]: the compile-time message for a field stored under one of the table's own
//!   attributes.
//!
//! Nothing here allocates beyond what the work needs: a key is written into one `String`
//! sized from its parts, and reading a key copies nothing but the field values.

use std::borrow::Cow;
use std::future::Future;
use std::marker::PhantomData;
use std::ops::Bound;

use futures_util::stream::BoxStream;
use serde::de::DeserializeOwned;

use crate::db::Db;
use crate::entity::Entity;
use crate::error::Error;
use crate::expr::{Condition, Path};
use crate::key::{IndexArg, Key, KeyArg, KeyPartFns, KeyReader, escape_into};
use crate::ops::{
    AsCollection, AsItem, AsProjection, BoxFuture, Collection, Cursor, EntityQuery, KeyStart,
    OnIndex, OnTable, Page, Query, QueryFrom,
};
use crate::table::{IndexDef, Table};

// ---------------------------------------------------------------------------------------------
// Key templates as data

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
    fn to_sort_key(&mut self) -> Result<(), Error> {
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
                None if !self.on_sk && self.keys.sk.is_some() => self.to_sort_key()?,
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
                None => self.to_sort_key()?,
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

// ---------------------------------------------------------------------------------------------
// Level-by-level queries

/// A value for a placeholder of type `T` of a query on the table (`KeyArg`) or on an index
/// (`IndexArg`, which also takes the `KeyPart` inside an `Option` field).
pub trait LevelArg<On, T> {
    /// The key text of the value, before escaping.
    fn level_text(&self) -> Cow<'_, str>;
}

impl<T, A: KeyArg<T>> LevelArg<OnTable, T> for A {
    fn level_text(&self) -> Cow<'_, str> {
        self.arg_key_text()
    }
}

impl<T, A: IndexArg<T>> LevelArg<OnIndex, T> for A {
    fn level_text(&self) -> Cow<'_, str> {
        self.index_arg_text()
    }
}

/// A query of `E` whose sort key is fixed level by level: the partition and the placeholders
/// fixed so far. The generated level types (`StoreQuery<'_, L>` for `Store`) wrap it, add one
/// method per operation on their own placeholder (`state`, `state_between`, ...), and
/// dereference to it for the methods that finish the query: every method below runs the
/// query with the sort keys that start with the levels fixed so far.
pub struct LevelQuery<'a, E: Entity, On = OnTable> {
    db: &'a Db<E::Table>,
    start: KeyStart,
    _on: PhantomData<fn() -> On>,
}

/// The generated level methods call these associated functions (not methods: they take the
/// state by value, which a dereferenced level type cannot give).
#[doc(hidden)]
impl<'a, E: Entity, On> LevelQuery<'a, E, On> {
    pub fn new(db: &'a Db<E::Table>, start: KeyStart) -> Self {
        LevelQuery { db, start, _on: PhantomData }
    }

    fn query_from(this: Self) -> QueryFrom<'a, E, On> {
        QueryFrom::new(this.db, this.start)
    }

    /// Fixes this level's placeholder to `value`, followed by `lit`.
    pub fn next<T>(this: Self, value: impl LevelArg<On, T>, lit: &str) -> Self {
        let start = this.start.push(&value.level_text(), lit);
        LevelQuery { start, ..this }
    }

    /// Fixes the last placeholder: the whole sort key.
    pub fn last<T>(this: Self, value: impl LevelArg<On, T>, lit: &str) -> EntityQuery<'a, E, On> {
        Self::query_from(this).eq(&value.level_text(), lit)
    }

    /// This level's value lies between `low` and `high` (inclusive); `sep` follows it in the
    /// template (`None` at the end).
    pub fn between<T>(
        this: Self,
        low: impl LevelArg<On, T>,
        high: impl LevelArg<On, T>,
        sep: Option<char>,
    ) -> EntityQuery<'a, E, On> {
        let (low, high) = (low.level_text(), high.level_text());
        Self::query_from(this).range(Bound::Included(&low), Bound::Included(&high), sep)
    }

    /// This level's value is greater than `value`.
    pub fn gt<T>(
        this: Self,
        value: impl LevelArg<On, T>,
        sep: Option<char>,
    ) -> EntityQuery<'a, E, On> {
        let value = value.level_text();
        Self::query_from(this).range(Bound::Excluded(&value), Bound::Unbounded, sep)
    }

    /// This level's value is greater than or equal to `value`.
    pub fn ge<T>(
        this: Self,
        value: impl LevelArg<On, T>,
        sep: Option<char>,
    ) -> EntityQuery<'a, E, On> {
        let value = value.level_text();
        Self::query_from(this).range(Bound::Included(&value), Bound::Unbounded, sep)
    }

    /// This level's value is less than `value`.
    pub fn lt<T>(
        this: Self,
        value: impl LevelArg<On, T>,
        sep: Option<char>,
    ) -> EntityQuery<'a, E, On> {
        let value = value.level_text();
        Self::query_from(this).range(Bound::Unbounded, Bound::Excluded(&value), sep)
    }

    /// This level's value is less than or equal to `value`.
    pub fn le<T>(
        this: Self,
        value: impl LevelArg<On, T>,
        sep: Option<char>,
    ) -> EntityQuery<'a, E, On> {
        let value = value.level_text();
        Self::query_from(this).range(Bound::Unbounded, Bound::Included(&value), sep)
    }

    /// This level's value starts with `prefix`.
    pub fn begins_with(this: Self, prefix: &str) -> EntityQuery<'a, E, On> {
        Self::query_from(this).begins_with(prefix)
    }

    /// The query with the levels fixed so far (for `.await` on a level, and the query of a
    /// template without levels).
    pub fn finish(this: Self) -> EntityQuery<'a, E, On> {
        Self::query_from(this).prefix()
    }

    /// The sort key is the literal before the first level, whole: the query of a literal sort
    /// key (one item per partition).
    pub fn exact(this: Self) -> EntityQuery<'a, E, On> {
        Self::query_from(this).eq("", "")
    }

    /// Every item of the partition, whatever its sort key.
    pub fn partition(this: Self) -> EntityQuery<'a, E, On> {
        Self::query_from(this).partition()
    }
}

impl<'a, E: Entity, On: 'a> LevelQuery<'a, E, On> {
    /// The query with the levels fixed so far (sort keys starting with them).
    pub fn into_query(&self) -> EntityQuery<'a, E, On> {
        QueryFrom::new(self.db, self.start.clone()).prefix()
    }

    /// At most `n` items (see [`Query::limit`]).
    pub fn limit(&self, n: usize) -> EntityQuery<'a, E, On> {
        self.into_query().limit(n)
    }

    /// Items evaluated per request (see [`Query::page_size`]).
    pub fn page_size(&self, n: u32) -> EntityQuery<'a, E, On> {
        self.into_query().page_size(n)
    }

    /// Descending sort-key order (see [`Query::reverse`]).
    pub fn reverse(&self) -> EntityQuery<'a, E, On> {
        self.into_query().reverse()
    }

    /// Keeps the items for which `condition` holds (see [`Query::filter`]).
    pub fn filter(&self, condition: Condition<E>) -> EntityQuery<'a, E, On> {
        self.into_query().filter(condition)
    }

    /// Reads only some attributes (see [`Query::project`]).
    pub fn project<P: DeserializeOwned + Send + 'static>(
        &self,
        paths: impl IntoIterator<Item = Path>,
    ) -> Query<'a, E::Table, AsProjection<E, P>, On> {
        self.into_query().project(paths)
    }

    /// Reads every entity type as collection `C` (see [`Query::collection`]).
    pub fn collection<C: Collection<Table = E::Table>>(
        &self,
    ) -> Query<'a, E::Table, AsCollection<C>, On> {
        self.into_query().collection()
    }

    /// Reads raw items of every entity type (see [`Query::items`]).
    pub fn items(&self) -> Query<'a, E::Table, AsItem, On> {
        self.into_query().items()
    }

    /// Every item (see [`Query::all`]).
    pub fn all(&self) -> impl Future<Output = Result<Vec<E>, Error>> + use<'a, E, On> {
        self.into_query().all()
    }

    /// The first item (see [`Query::first`]).
    pub fn first(&self) -> impl Future<Output = Result<Option<E>, Error>> + use<'a, E, On> {
        self.into_query().first()
    }

    /// The items as a stream (see [`Query::stream`]).
    pub fn stream(&self) -> BoxStream<'a, Result<E, Error>> {
        self.into_query().stream()
    }

    /// The items page by page (see [`Query::pages`]).
    pub fn pages(&self) -> BoxStream<'a, Result<Vec<E>, Error>> {
        self.into_query().pages()
    }

    /// One page behind a cursor (see [`Query::page`]).
    pub fn page<'c>(
        &self,
        cursor: Option<&'c Cursor>,
    ) -> impl Future<Output = Result<Page<E>, Error>> + use<'a, 'c, E, On> {
        self.into_query().page(cursor)
    }

    /// The number of items (see [`Query::count`]).
    pub fn count(&self) -> impl Future<Output = Result<usize, Error>> + use<'a, E, On> {
        self.into_query().count()
    }

    /// The future of `.await` on a generated level type.
    #[doc(hidden)]
    pub fn into_future(this: Self) -> BoxFuture<'a, Result<Vec<E>, Error>> {
        std::future::IntoFuture::into_future(Self::finish(this))
    }
}

impl<'a, E: Entity> LevelQuery<'a, E, OnTable> {
    /// Strongly consistent read (see [`Query::consistent`]); not on an index.
    pub fn consistent(&self) -> EntityQuery<'a, E, OnTable> {
        self.into_query().consistent()
    }
}

// ---------------------------------------------------------------------------------------------
// Compile-time messages

/// A message built during constant evaluation (a `panic!` in a `const` item can only print
/// text it is given whole).
pub struct ConstMsg {
    buf: [u8; ConstMsg::CAPACITY],
    len: usize,
}

impl ConstMsg {
    const CAPACITY: usize = 1024;
    const EMPTY: ConstMsg = ConstMsg { buf: [0; ConstMsg::CAPACITY], len: 0 };

    /// Appends `text`, or as much of it as fits, cut at a character boundary.
    const fn push(mut self, text: &str) -> Self {
        let bytes = text.as_bytes();
        let mut n = bytes.len();
        if n > Self::CAPACITY - self.len {
            n = Self::CAPACITY - self.len;
            while n > 0 && (bytes[n] & 0b1100_0000) == 0b1000_0000 {
                n -= 1;
            }
        }
        let mut i = 0;
        while i < n {
            self.buf[self.len + i] = bytes[i];
            i += 1;
        }
        self.len += n;
        self
    }

    /// The message.
    pub const fn as_str(&self) -> &str {
        match std::str::from_utf8(self.buf.split_at(self.len).0) {
            Ok(text) => text,
            Err(_) => "",
        }
    }
}

/// The compile-time error for field `field`, stored as attribute `attr`, when the table of
/// `E` (`table`, as the message names it) uses that attribute itself; no message otherwise.
pub const fn attr_clash<E: Entity>(field: &str, attr: &str, table: &str) -> Option<ConstMsg> {
    let (before, after) = match crate::__private::table_attr_role::<E>(attr) {
        1 => ("the partition key attribute of ", ""),
        2 => ("the sort key attribute of ", ""),
        3 => ("where ", " stores each item's entity type"),
        4 => ("a key attribute of an index of ", ""),
        _ => return None,
    };
    let message = ConstMsg::EMPTY
        .push("field `")
        .push(field)
        .push("` is stored as attribute `")
        .push(attr)
        .push("`, which is ")
        .push(before)
        .push(table)
        .push(after)
        .push("; give the field another attribute name with #[serde(rename = \"...\")]");
    Some(message)
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

    #[test]
    fn const_messages_are_cut_at_a_character_boundary() {
        let long = "é".repeat(ConstMsg::CAPACITY);
        let msg = ConstMsg::EMPTY.push("a").push(&long);
        let text = msg.as_str();
        assert!(text.len() <= ConstMsg::CAPACITY && text.len() > ConstMsg::CAPACITY - 2);
        assert!(ConstMsg::EMPTY.as_str().is_empty());
    }
}
