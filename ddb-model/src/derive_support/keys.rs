//! An entity's key templates as data: the derive writes them down once ([`EntityKeys`],
//! [`IndexKeys`]); every key is built and read back by the template runtime
//! ([`KeyTemplate`]), and these types only add what the entity knows (its name, its table's
//! key attributes, its indexes).

use std::borrow::Cow;
use std::marker::PhantomData;

use aws_sdk_dynamodb::types::AttributeValue;

use crate::db::Db;
use crate::error::{Error, RequestProblem};
use crate::expr::{Touch, UpdateActions};
use crate::item::Item;
use crate::key::{
    IndexArg, IndexKeyPart, Key, KeyArg, KeyPart, KeyReader, KeyTemplate, MAX_PARTITION_KEY_BYTES,
    MAX_SORT_KEY_BYTES, check_key_value,
};
use crate::model::{Entity, IndexDef, Table, string_attr};
use crate::ops::{KeyStart, LevelQuery, OnIndex};

/// The key text of a `KeyArg` (an argument of a generated constructor).
#[inline]
pub fn key_arg<T>(value: &impl KeyArg<T>) -> Cow<'_, str> {
    value.arg_key_text()
}

/// The text a key field stores for a `KeyArg` when its key text keeps less of it (a
/// `CaseInsensitive`'s case; see `KeyPart::stored_text`), for an upsert: `None` for most
/// types, without allocating.
#[inline]
pub fn key_arg_stored<T>(value: &impl KeyArg<T>) -> Option<String> {
    value.arg_stored_text().map(Cow::into_owned)
}

/// The text a key field stores for a `KeyArg` whose placeholder has a lossy format
/// (`:lower`, `:iso8601(ms)`), for an upsert: the value's own stored text (its serde string),
/// which the key no longer holds; `None` when the value is not stored as text.
pub fn key_arg_serialized<T: KeyPart + serde::Serialize>(value: &impl KeyArg<T>) -> Option<String> {
    let value = T::from_key_text(&value.arg_key_text()).ok()?;
    match crate::item::to_value(&value) {
        Ok(aws_sdk_dynamodb::types::AttributeValue::S(text)) => Some(text),
        _ => None,
    }
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

    /// The key with these key-field texts (in the order of `E::KeyFields`). A verbatim part
    /// that would read back differently marks the key refused: `Key::validate`, which every
    /// operation calls before sending, reports it.
    #[inline]
    pub fn key(&self, parts: &[Cow<'_, str>]) -> Key<E> {
        let sk = self.sk.as_ref().map(|sk| sk.render(parts));
        let key = Key::from_parts(self.partition(parts), sk);
        if let Err(ambiguous) = self.pk.check(parts) {
            return key.refused(false, ambiguous);
        }
        match self.sk.as_ref().map(|sk| sk.check(parts)) {
            Some(Err(ambiguous)) => key.refused(true, ambiguous),
            _ => key,
        }
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
        let start = KeyStart::new(None, self.partition(parts), &base);
        LevelQuery::new(db, checked(start, &self.pk, parts))
    }

    /// The key fields of a stored item, read from its key attributes (for its
    /// `#[entity(from_key)]` fields).
    pub fn parse_item(&self, item: &Item) -> Result<E::KeyFields, Error> {
        let text = |attr: &str| string_attr(item, attr);
        let pk = text(<E::Table as Table>::PK).unwrap_or_default();
        E::parse_key(pk, <E::Table as Table>::SK.and_then(text))
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
    /// Where each part comes from when an update rewrites the key (by part number); empty
    /// when no update can (see [`update_index_keys`]).
    pub sources: &'static [UpdatePart],
    /// The bool field (its stored attribute) that decides whether the item is in the index
    /// (`when = unread`), if any.
    pub when: Option<&'static str>,
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
        sources: &'static [UpdatePart],
        when: Option<&'static str>,
    ) -> Self {
        IndexKeys { def, name, pk, sk, sources, when }
    }

    /// Hands the item's key on this index to `sink`; nothing when a part is `None` (an
    /// optional field left empty: the item is not in the index). A verbatim part that would
    /// read back differently is [`Error::InvalidKey`].
    #[inline]
    pub fn write<E: Entity>(
        &self,
        parts: &[Option<Cow<'_, str>>],
        sink: &mut IndexSink<'_>,
    ) -> Result<(), Error> {
        let Some(def) = self.def else {
            return Ok(());
        };
        if parts.iter().any(Option::is_none) {
            return Ok(());
        }
        let refused = |attr: &str, problem| Error::InvalidKey {
            entity: E::NAME,
            attribute: attr.to_owned(),
            problem,
        };
        self.pk.check(parts).map_err(|p| refused(def.pk, p))?;
        if let Some(sk) = &self.sk {
            sk.check(parts).map_err(|p| refused(def.sk.unwrap_or(def.pk), p))?;
        }
        let sk = self.sk.as_ref().map(|sk| sk.render(parts));
        sink(def, self.pk.render(parts), sk);
        Ok(())
    }

    /// The texts of the parts of the item's key on this index (by part number, as the
    /// `#[index]` templates number them), read from its stored index key attributes; `None`
    /// when the item is not in the index.
    pub fn read<E: Entity>(&self, item: &Item) -> Result<Option<Vec<String>>, Error> {
        let Some(def) = self.def else {
            return Ok(None);
        };
        let text = |attr: &str| string_attr(item, attr);
        let Some(pk) = text(def.pk) else {
            return Ok(None);
        };
        let sk = match (&self.sk, def.sk) {
            (Some(template), Some(attr)) => match text(attr) {
                Some(sk) => Some((template, attr, sk)),
                None => return Ok(None),
            },
            _ => None,
        };
        part_texts(E::NAME, (&self.pk, def.pk, pk), sk).map(Some)
    }

    /// The stored value of an `#[entity(from_key)]` field of type `F` (a [`KeyPart`] or an
    /// `Option` of one) from the text of its part in this index's key (`None`: no text).
    pub fn field_value<E: Entity, F: IndexKeyPart>(
        &self,
        field: &str,
        text: Option<&String>,
    ) -> Result<AttributeValue, Error>
    where
        F::Part: serde::Serialize,
    {
        let text = text.map_or("", String::as_str);
        let attribute = self.def.map_or(self.name, |d| d.pk);
        use crate::error::KeyParseReason as Why;
        let error = |reason| Error::KeyParse {
            entity: E::NAME,
            attribute,
            template: self.pk.text(),
            input: text.to_owned(),
            reason: Box::new(reason),
        };
        let field = || Some(field.into());
        let value = F::Part::from_key_text(text)
            .map_err(|e| error(Why::Part { field: field(), problem: e }))?;
        if !F::Part::CANONICAL_PARSE && value.key_text() != text {
            let (text, type_name) = (text.into(), std::any::type_name::<F::Part>());
            return Err(error(Why::NotCanonical { field: field(), text, type_name }));
        }
        field_value::<E, F::Part>(&value)
    }

    /// A query of the partition `parts` on this index, its sort key fixed level by level.
    pub fn levels<'a, E: Entity>(
        &self,
        db: &'a Db<E::Table>,
        parts: &[Cow<'_, str>],
    ) -> LevelQuery<'a, E, OnIndex> {
        let pk = self.pk.render(parts);
        let base = self.sk.as_ref().map(KeyTemplate::base).unwrap_or_default();
        let start = KeyStart::on_index(self.def, self.name, pk, &base);
        LevelQuery::new(db, checked(start, &self.pk, parts))
    }
}

/// The stored value of an `#[entity(from_key)]` field (through serde, as the field would be
/// stored).
pub fn field_value<E: Entity, T: serde::Serialize>(value: &T) -> Result<AttributeValue, Error> {
    crate::item::to_value(value)
        .map_err(|source| Error::Serialize { entity: E::NAME.to_owned(), source })
}

/// `start`, refused when a verbatim part of its partition key would read back differently.
fn checked(start: KeyStart, pk: &KeyTemplate, parts: &[Cow<'_, str>]) -> KeyStart {
    match pk.check(parts) {
        Ok(()) => start,
        Err(ambiguous) => start.refuse_partition(ambiguous),
    }
}

/// Where an index key's part comes from when an update rewrites the key.
#[derive(Debug, Clone, Copy)]
pub enum UpdatePart {
    /// Part `n` of the primary key (a key field: the update cannot change it).
    Key(usize),
    /// The field stored as the attribute, its key text made from the value the update sets
    /// (`None`: an empty `Option`, the item leaves the index); true when the field is an
    /// `Option` (setting it may put the item into the index).
    Field(&'static str, fn(&AttributeValue) -> Result<Option<String>, serde_dynamo::Error>, bool),
    /// A computed placeholder: the function of the fields it is computed from, each taken
    /// from the value the update sets (all of them are needed) or from the primary key; true
    /// when its type is an `Option`.
    Computed(&'static [ComputedInput], ComputeFn, bool),
}

/// Where an input of a computed placeholder comes from when an update rewrites its key.
#[derive(Debug, Clone, Copy)]
pub enum ComputedInput {
    /// The field stored as this attribute: the update must set it.
    Field(&'static str),
    /// Part `n` of the primary key (a key field: the update cannot change it).
    Key(usize),
}

/// An input of a computed placeholder, as an update knows it.
#[derive(Debug, Clone, Copy)]
pub enum ComputeArg<'a> {
    /// The value the update sets (`NULL` for a removed field).
    Value(&'a AttributeValue),
    /// The key text of a primary-key field.
    Key(&'a str),
}

/// The key text of a computed placeholder from the inputs it is computed from (in the order
/// they are declared).
pub type ComputeFn = fn(&[ComputeArg<'_>]) -> Result<Option<String>, serde_dynamo::Error>;

/// A field's value read from the value an update sets (for a computed placeholder).
pub fn decode<T: serde::de::DeserializeOwned>(
    arg: &ComputeArg<'_>,
) -> Result<T, serde_dynamo::Error> {
    match arg {
        ComputeArg::Value(value) => crate::item::from_value((*value).clone()),
        ComputeArg::Key(text) => crate::item::from_value(AttributeValue::S((*text).to_owned())),
    }
}

/// A primary-key field's value read back from its key text (for a computed placeholder).
pub fn decode_key<T: KeyPart>(arg: &ComputeArg<'_>) -> Result<T, serde_dynamo::Error> {
    use serde::de::Error as _;
    match arg {
        ComputeArg::Key(text) => T::from_key_text(text).map_err(serde_dynamo::Error::custom),
        ComputeArg::Value(_) => {
            Err(serde_dynamo::Error::custom("a key field is read from the key"))
        }
    }
}

/// The key text of a computed placeholder's value of type `F` (`None`: an empty `Option`).
pub fn computed_text<F: IndexKeyPart>(value: &F) -> Option<String> {
    value.index_part().map(|part| part.key_text().into_owned())
}

impl UpdatePart {
    /// The attributes of the fields the part is made of (none for a primary-key part).
    fn attrs(&self) -> impl Iterator<Item = &'static str> + '_ {
        let (field, computed): (Option<&'static str>, &[ComputedInput]) = match self {
            UpdatePart::Key(_) => (None, &[]),
            UpdatePart::Field(attr, ..) => (Some(attr), &[]),
            UpdatePart::Computed(inputs, ..) => (None, inputs),
        };
        field.into_iter().chain(computed.iter().filter_map(|input| match input {
            ComputedInput::Field(attr) => Some(*attr),
            ComputedInput::Key(_) => None,
        }))
    }

    /// True when the part may be empty (an `Option`): the item may be out of the index.
    fn optional(&self) -> bool {
        matches!(self, UpdatePart::Field(.., true) | UpdatePart::Computed(.., true))
    }
}

/// `UpdatePart::Key(n)`.
pub const fn from_key(n: usize) -> UpdatePart {
    UpdatePart::Key(n)
}

/// `UpdatePart::Field(attr, ..)` for a field of type `F`.
pub const fn from_field<F: IndexKeyPart + serde::de::DeserializeOwned>(
    attr: &'static str,
) -> UpdatePart {
    UpdatePart::Field(attr, index_value_text::<F>, F::OPTIONAL)
}

/// `UpdatePart::Computed(inputs, compute, ..)` for a computed placeholder of type `F`.
pub const fn computed<F: IndexKeyPart>(
    inputs: &'static [ComputedInput],
    compute: ComputeFn,
) -> UpdatePart {
    UpdatePart::Computed(inputs, compute, F::OPTIONAL)
}

/// What `Entity::index_key_updates` hands every rewritten index-key attribute to: its new
/// value, or `None` to remove it.
pub type IndexChanges<'a> = dyn FnMut(&'static str, Option<String>) + 'a;

/// The key text of an index key field of type `F` from the value an update sets.
fn index_value_text<F: IndexKeyPart + serde::de::DeserializeOwned>(
    value: &AttributeValue,
) -> Result<Option<String>, serde_dynamo::Error> {
    Ok(computed_text(&crate::item::from_value::<F>(value.clone())?))
}

/// A part of an index key as an update knows it.
enum PartText {
    /// Its key text.
    Text(String),
    /// An empty `Option`: the item leaves the index.
    Absent,
    /// The update does not set this field, which the part is made of.
    Unknown(&'static str),
}

/// What the update makes of each part of an index key (by part number), read from the
/// values it sets and from the primary key (parsed once, into `primary`).
fn part_texts_of<E: Entity>(
    sources: &[UpdatePart],
    actions: &UpdateActions<E>,
    (keys, key, primary): (&EntityKeys<E>, &Key<E>, &mut Option<Vec<String>>),
) -> Result<Vec<PartText>, Error> {
    const REMOVED: AttributeValue = AttributeValue::Null(true);
    let serialize = |source| Error::Serialize { entity: E::NAME.to_owned(), source };
    let known = |text: Option<String>| text.map_or(PartText::Absent, PartText::Text);
    let mut texts = Vec::with_capacity(sources.len());
    for part in sources {
        texts.push(match *part {
            UpdatePart::Key(n) => {
                let texts = primary_texts_once(primary, keys, key)?;
                PartText::Text(texts.get(n).cloned().unwrap_or_default())
            }
            UpdatePart::Field(attr, text, _) => match actions.touch(attr) {
                Touch::Set(value) => known(text(value).map_err(serialize)?),
                Touch::Removed => PartText::Absent,
                Touch::Untouched | Touch::Computed => PartText::Unknown(attr),
            },
            UpdatePart::Computed(inputs, compute, _) => {
                let from_key: &[String] =
                    if inputs.iter().any(|i| matches!(i, ComputedInput::Key(_))) {
                        primary_texts_once(primary, keys, key)?
                    } else {
                        &[]
                    };
                let mut values = Vec::with_capacity(inputs.len());
                let mut unknown = None;
                for input in inputs {
                    match *input {
                        ComputedInput::Key(n) => {
                            values.push(ComputeArg::Key(from_key.get(n).map_or("", String::as_str)))
                        }
                        ComputedInput::Field(attr) => match actions.touch(attr) {
                            Touch::Set(value) => values.push(ComputeArg::Value(value)),
                            Touch::Removed => values.push(ComputeArg::Value(&REMOVED)),
                            Touch::Untouched | Touch::Computed => {
                                unknown = Some(attr);
                                break;
                            }
                        },
                    }
                }
                match unknown {
                    Some(attr) => PartText::Unknown(attr),
                    None => known(compute(&values).map_err(serialize)?),
                }
            }
        });
    }
    Ok(texts)
}

/// The attributes of the fields a template's parts are made of.
fn inputs<'a>(
    sources: &'a [UpdatePart],
    template: &'a KeyTemplate,
) -> impl Iterator<Item = &'static str> + 'a {
    template_parts(template).filter_map(|n| sources.get(n)).flat_map(UpdatePart::attrs)
}

/// The part numbers a template's placeholders hold.
fn template_parts(template: &KeyTemplate) -> impl Iterator<Item = usize> + '_ {
    template.segs().iter().filter_map(|seg| seg.placeholder().map(|(n, ..)| n))
}

/// `Entity::index_key_updates`: every index-key *attribute* (an index's partition key or
/// sort key) made of a field the update changes is written again, in the same request; an
/// attribute whose fields the update leaves alone is not. The attribute's other fields come
/// from the primary key or must be set by the update too
/// ([`RequestProblem::IndexKeyIncomplete`]); a field changed by an action whose result
/// depends on the stored item makes the attribute unknown
/// ([`RequestProblem::IndexKeyNotSet`]). An empty `Option` part removes both attributes
/// (the item leaves the index), and a value set for an `Option` part writes both (the item
/// may be entering it, and needs both). An index chosen by `when`, or holding several keys,
/// is decided as a whole: the update sets every `when` field of the index, and the key it
/// chooses is written whole.
pub fn update_index_keys<E: Entity>(
    keys: &EntityKeys<E>,
    updates: &[IndexKeys],
    key: &Key<E>,
    actions: &UpdateActions<E>,
    sink: &mut IndexChanges<'_>,
) -> Result<(), Error> {
    let mut primary: Option<Vec<String>> = None;
    for (i, first) in updates.iter().enumerate() {
        let name = first.name;
        if updates[..i].iter().any(|u| u.name == name) {
            continue; // decided with the first key of its index
        }
        let Some(def) = first.def else { continue };
        let group = || updates[i..].iter().filter(move |u| u.name == name);
        if first.when.is_none() && group().nth(1).is_none() {
            let keys = (keys, key, &mut primary);
            update_index_attrs::<E>(first, def, actions, keys, sink)?;
        } else {
            update_whole_index::<E, _>(group, def, actions, (keys, key, &mut primary), sink)?;
        }
    }
    Ok(())
}

/// The refusal of an update that changes index `index` but leaves out `field`
/// (`set`: changes it with an action whose result is unknown).
fn refused(index: &'static str, field: &'static str, set: bool) -> Error {
    Error::InvalidRequest {
        path: field.to_owned(),
        problem: if set {
            RequestProblem::IndexKeyNotSet { index, field }
        } else {
            RequestProblem::IndexKeyIncomplete { index, field }
        },
    }
}

/// [`update_index_keys`] for an index with one key and no `when`: attribute by attribute.
fn update_index_attrs<E: Entity>(
    keys: &IndexKeys,
    def: &'static IndexDef,
    actions: &UpdateActions<E>,
    primary: (&EntityKeys<E>, &Key<E>, &mut Option<Vec<String>>),
    sink: &mut IndexChanges<'_>,
) -> Result<(), Error> {
    let attrs = [
        Some((&keys.pk, def.pk, MAX_PARTITION_KEY_BYTES)),
        keys.sk.as_ref().zip(def.sk).map(|(t, attr)| (t, attr, MAX_SORT_KEY_BYTES)),
    ];
    let sources = keys.sources;
    let changed = attrs.map(|a| {
        a.filter(|(t, ..)| inputs(sources, t).any(|attr| actions.touch(attr) != Touch::Untouched))
    });
    if changed.iter().all(Option::is_none) {
        return Ok(());
    }
    // A field whose new value is unknown is reported before one left out.
    for (t, ..) in changed.iter().flatten() {
        if let Some(attr) = inputs(sources, t).find(|a| actions.touch(a) == Touch::Computed) {
            return Err(refused(keys.name, attr, true));
        }
    }
    let texts = part_texts_of(sources, actions, primary)?;
    let changed_parts = || {
        changed
            .iter()
            .flatten()
            .flat_map(|(t, ..)| template_parts(t))
            .filter_map(|n| Some((texts.get(n)?, sources.get(n)?)))
    };
    // An empty `Option`: the item leaves the index, and both attributes go (a put writes
    // neither), whatever else the update sets.
    if changed_parts().any(|(text, _)| matches!(text, PartText::Absent)) {
        for (_, attr, _) in attrs.into_iter().flatten() {
            sink(attr, None);
        }
        return Ok(());
    }
    // A value for an `Option` part: the item may be entering the index, which takes both
    // attributes.
    let entering =
        changed_parts().any(|(text, part)| part.optional() && matches!(text, PartText::Text(_)));
    let written = if entering { attrs } else { changed };
    let mut rendered = Vec::with_capacity(2);
    for (template, attr, max) in written.into_iter().flatten() {
        let mut values: Vec<Option<Cow<'_, str>>> = vec![None; sources.len()];
        for n in template_parts(template) {
            match texts.get(n) {
                Some(PartText::Text(text)) => {
                    if let Some(slot) = values.get_mut(n) {
                        *slot = Some(Cow::Borrowed(text));
                    }
                }
                Some(PartText::Unknown(field)) => return Err(refused(keys.name, field, false)),
                Some(PartText::Absent) | None => {}
            }
        }
        template.check(&values).map_err(|problem| Error::InvalidKey {
            entity: E::NAME,
            attribute: attr.to_owned(),
            problem,
        })?;
        let value = template.render(&values);
        check_key_value(E::NAME, attr, &value, max)?;
        rendered.push((attr, value));
    }
    for (attr, value) in rendered {
        sink(attr, Some(value));
    }
    Ok(())
}

/// [`update_index_keys`] for an index chosen by `when` or holding several keys: decided as
/// a whole.
fn update_whole_index<'u, E: Entity, G: Iterator<Item = &'u IndexKeys>>(
    group: impl Fn() -> G,
    def: &'static IndexDef,
    actions: &UpdateActions<E>,
    (keys, key, primary): (&EntityKeys<E>, &Key<E>, &mut Option<Vec<String>>),
    sink: &mut IndexChanges<'_>,
) -> Result<(), Error> {
    let touched = |attr: &str| actions.touch(attr) != Touch::Untouched;
    let affected = group().any(|u| {
        u.when.is_some_and(touched) || u.sources.iter().flat_map(UpdatePart::attrs).any(touched)
    });
    if !affected {
        return Ok(());
    }
    // A field whose new value is unknown is reported before one left out: setting the
    // others would not help.
    for update in group() {
        let fields = update.sources.iter().flat_map(UpdatePart::attrs);
        if let Some(attr) = fields.chain(update.when).find(|a| actions.touch(a) == Touch::Computed)
        {
            return Err(refused(update.name, attr, true));
        }
    }
    let mut written: Option<(String, Option<String>)> = None;
    let mut collision = false;
    for update in group() {
        if let Some(when) = update.when {
            match actions.touch(when) {
                Touch::Set(AttributeValue::Bool(true)) => {}
                Touch::Set(AttributeValue::Bool(false)) => continue,
                Touch::Untouched => return Err(refused(update.name, when, false)),
                _ => return Err(refused(update.name, when, true)),
            }
        }
        let texts = part_texts_of(update.sources, actions, (keys, key, &mut *primary))?;
        let mut parts: Vec<Option<Cow<'_, str>>> = Vec::with_capacity(texts.len());
        for text in &texts {
            parts.push(match text {
                PartText::Text(text) => Some(Cow::Borrowed(text)),
                PartText::Absent => None,
                PartText::Unknown(field) => return Err(refused(update.name, field, false)),
            });
        }
        update.write::<E>(&parts, &mut |_, pk, sk| {
            collision |= written.is_some();
            written = Some((pk, sk));
        })?;
    }
    if collision {
        return Err(Error::AttributeCollision { entity: E::NAME, attribute: def.pk.to_owned() });
    }
    match written {
        Some((pk, sk)) => {
            check_key_value(E::NAME, def.pk, &pk, MAX_PARTITION_KEY_BYTES)?;
            sink(def.pk, Some(pk));
            if let (Some(attr), Some(sk)) = (def.sk, sk) {
                check_key_value(E::NAME, attr, &sk, MAX_SORT_KEY_BYTES)?;
                sink(attr, Some(sk));
            }
        }
        None => {
            sink(def.pk, None);
            if let Some(attr) = def.sk {
                sink(attr, None);
            }
        }
    }
    Ok(())
}

/// [`primary_texts`], parsed once per update and kept in `cache`.
fn primary_texts_once<'c, E: Entity>(
    cache: &'c mut Option<Vec<String>>,
    keys: &EntityKeys<E>,
    key: &Key<E>,
) -> Result<&'c [String], Error> {
    if cache.is_none() {
        *cache = Some(primary_texts(keys, key)?);
    }
    Ok(cache.as_deref().unwrap_or_default())
}

/// The texts of the parts of a primary key, by part number.
fn primary_texts<E: Entity>(keys: &EntityKeys<E>, key: &Key<E>) -> Result<Vec<String>, Error> {
    let table_pk = <E::Table as Table>::PK;
    let sk_attr = <E::Table as Table>::SK.unwrap_or(table_pk);
    let sk = keys.sk.as_ref().zip(key.sk()).map(|(template, sk)| (template, sk_attr, sk));
    part_texts(E::NAME, (&keys.pk, table_pk, key.pk()), sk)
}

/// A stored key, `(template, attribute, text)` for each of its partition and sort keys, read
/// back into the texts of its parts by part number: the two templates number their parts
/// alike, and a part in both reads the same.
fn part_texts(
    entity: &'static str,
    (template, attr, pk): (&KeyTemplate, &'static str, &str),
    sk: Option<(&KeyTemplate, &'static str, &str)>,
) -> Result<Vec<String>, Error> {
    let mut texts: Vec<String> =
        template.parse(entity, attr, pk)?.into_iter().map(Cow::into_owned).collect();
    let Some((template, attr, sk)) = sk else { return Ok(texts) };
    for (n, part) in template.parse(entity, attr, sk)?.into_iter().enumerate() {
        match texts.get_mut(n) {
            Some(slot) if slot.is_empty() => *slot = part.into_owned(),
            Some(_) => {}
            None => texts.push(part.into_owned()),
        }
    }
    Ok(texts)
}
