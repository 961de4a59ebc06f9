//! Denormalised copies kept from the stream: a value computed from each item of one entity
//! (a user's name) copied into a field of the items that refer to it (the user's posts), by a
//! processor of the table's stream, each change once and never an older one over a newer one.
//! Guide: `docs/aggregates.md`.
//!
//! **By state, in order.** For each source item the copy keeps, in an item of the library,
//! the value it last copied and the sequence number of the record that set it. Each target
//! item written holds that sequence number too (in an attribute of the library, which reads
//! never show), and every write of a target is conditioned on it not being newer. A change
//! of a source is first recorded, then copied to its targets, then marked done, so a batch
//! that failed half-way is finished when it is delivered again. A target written by a user
//! (a new post carrying the name its writer read) is a record too: the processor compares it
//! with the source's recorded value and repairs it, so a stale copy written concurrently with a
//! change of the source does not survive.

mod apply;
mod rebuild;

use std::sync::Arc;

use aws_sdk_dynamodb::types::AttributeValue;
use futures_util::TryStreamExt;
use serde::Serialize;

pub use apply::CopyProcessor;
pub use rebuild::Recopied;

use super::apply::{Seq, put_if_seq};
use super::{SEQ_ATTR, SourceKey, bookkeeping_key, s, tag, valid_name};
use crate::db::Db;
use crate::entity::Identity;
use crate::error::{AggregateProblem, Error};
use crate::expr::{Attr, ExprBuilder, Path};
use crate::item::{Item, MAX_ITEM_BYTES, item_size};
use crate::key::Key;
use crate::model::{Entity, MARKER_PREFIX, Table, from_item, is_entity_item, string_attr};
use crate::ops::EntityQuery;
use crate::ops::action::Action;
use crate::ops::retry;
use crate::ops::write::read_item;
use crate::stats::Op;

/// The value copied (absent: the copy removes the target's field).
const VALUE_ATTR: &str = "_value";
/// Present once the state is copied to every target.
const DONE_ATTR: &str = "_done";
/// Present when the source item is deleted.
const GONE_ATTR: &str = "_gone";

type ValueFn<S, V> = Arc<dyn Fn(&S) -> V + Send + Sync>;
type TargetsFn<S, T> =
    Arc<dyn for<'a> Fn(&'a Db<<S as Entity>::Table>, &S) -> EntityQuery<'a, T> + Send + Sync>;
type SourceFn<S, T> = Arc<dyn Fn(&T) -> Option<Key<S>> + Send + Sync>;

/// A value computed from each item of entity `S` (the *source*), copied into field `V` of the
/// items of entity `T` that refer to it (the *targets*), kept up to date from the table's
/// stream by a [`CopyProcessor`]. Guide: `docs/aggregates.md`.
///
/// ```
/// use ddb_model::prelude::*;
/// use ddb_model::stream::ViewType;
/// use ddb_model::stream::aggregate::{CopyProcessor, FieldCopy};
/// # use serde::{Deserialize, Serialize};
/// #[derive(Entity, Serialize, Deserialize)]
/// #[entity(pk = "USER#<id>", sk = "PROFILE")]
/// struct User { id: String, name: String }
///
/// #[derive(Entity, Serialize, Deserialize)]
/// #[entity(pk = "USER#<author>", sk = "POST#<seq>")]
/// struct Post { author: String, seq: u32, author_name: String }
///
/// let author_names = FieldCopy::new(
///     "author_names",
///     |u: &User| u.name.clone(),                     // the value, from each user
///     Post::AUTHOR_NAME,                             // copied into this field of posts
///     |db, u: &User| Post::partition(db, &u.id),     // a user's posts
///     |p: &Post| Some(User::key(&p.author)),         // the user a post copies from
/// );
/// # #[cfg(feature = "local")]
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// # let db = ddb_model::local::isolated_db::<ddb_model::DefaultTable>().await?;
/// let processor = CopyProcessor::new(&db, &author_names, ViewType::NewAndOldImages)?;
/// # let records: Vec<ddb_model::stream::StreamRecord> = Vec::new();
/// processor.apply(&records).await?;
/// assert!(author_names.stale(&db).await?.is_empty());
/// # Ok::<(), ddb_model::Error>(()) }).unwrap();
/// ```
pub struct FieldCopy<S: Entity, T: Entity, V> {
    name: &'static str,
    value: ValueFn<S, V>,
    field: Path,
    targets: TargetsFn<S, T>,
    source: SourceFn<S, T>,
}

impl<S: Entity, T: Entity, V> Clone for FieldCopy<S, T, V> {
    fn clone(&self) -> Self {
        FieldCopy {
            name: self.name,
            value: self.value.clone(),
            field: self.field.clone(),
            targets: self.targets.clone(),
            source: self.source.clone(),
        }
    }
}

impl<S: Entity, T: Entity, V> std::fmt::Debug for FieldCopy<S, T, V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FieldCopy")
            .field("name", &self.name)
            .field("source", &S::NAME)
            .field("target", &T::NAME)
            .field("field", &self.field.to_string())
            .finish()
    }
}

/// What a source's state item says.
#[derive(Debug, Clone, PartialEq)]
struct State {
    seq: Seq,
    /// The value as the target's field stores it (`None`: the field is removed).
    value: Option<AttributeValue>,
    /// The source item is deleted: its targets are left as they are.
    gone: bool,
    /// Copied to every target.
    done: bool,
}

impl<S, T, V> FieldCopy<S, T, V>
where
    S: Entity,
    T: Entity<Table = S::Table>,
    V: Serialize + 'static,
{
    /// A copy named `name` (1 to 64 ASCII letters, digits, `_`, `-`; checked by
    /// [`CopyProcessor::new`]): `value` computed from each `S` is copied into `field` of the
    /// `T` items that `targets` finds (a query of the table, run strongly consistent) and
    /// whose `source` is that `S` (`None`: the target copies from nothing).
    pub fn new(
        name: &'static str,
        value: impl Fn(&S) -> V + Send + Sync + 'static,
        field: Attr<T, V>,
        targets: impl for<'a> Fn(&'a Db<S::Table>, &S) -> EntityQuery<'a, T> + Send + Sync + 'static,
        source: impl Fn(&T) -> Option<Key<S>> + Send + Sync + 'static,
    ) -> Self {
        FieldCopy {
            name,
            value: Arc::new(value),
            field: field.path(),
            targets: Arc::new(targets),
            source: Arc::new(source),
        }
    }

    /// The copy's name.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The error `problem` of this copy.
    fn problem(&self, problem: AggregateProblem) -> Error {
        Error::Aggregate { aggregate: self.name, problem }
    }

    /// The error a try ends with when the state kept changing.
    fn conflict(&self) -> Error {
        Error::ConditionFailed { entity: self.name, key: String::new(), current: None }
    }

    /// Checks the declaration: its name, and a target whose items a copy may write.
    fn check(&self) -> Result<(), Error> {
        if !valid_name(self.name) {
            return Err(self.problem(AggregateProblem::InvalidName { name: self.name.into() }));
        }
        // A signed item cannot take a write the Encryption SDK did not sign.
        crate::model::refuse_sealed::<T>("a field copy")
    }

    fn field_name(&self) -> &str {
        match self.field.segments().first() {
            Some(crate::expr::PathSegment::Name(name)) => name,
            _ => "",
        }
    }

    /// The attribute of a target that holds the sequence number of its copy (a marker of the
    /// library: reads never show it to the entity).
    fn seq_attr(&self) -> String {
        format!("{MARKER_PREFIX}copy.{}", self.name)
    }

    /// The value of `source` as the target's field stores it (`None`: removed).
    fn value_of(&self, source: &S) -> Result<Option<AttributeValue>, Error> {
        let value = (self.value)(source);
        let field = &self.field;
        match crate::item::to_value_or_none(&value, field.keeps_null()) {
            Ok(None) if !field.writes_null() => Ok(None),
            Ok(value) => Ok(Some(value.unwrap_or(AttributeValue::Null(true)))),
            Err(source) => Err(Error::Serialize { entity: field.to_string(), source }),
        }
    }

    /// The key of the source `target` copies from, checked; `None` when it copies from none.
    fn source_key(&self, target: &T) -> Result<Option<SourceKey>, Error> {
        let Some(key) = (self.source)(target) else { return Ok(None) };
        key.validate()?;
        Ok(Some(SourceKey { pk: key.pk().to_owned(), sk: key.sk().map(str::to_owned) }))
    }

    /// The key of the item that keeps source `source`'s state.
    fn state_key(&self, source: &SourceKey) -> Result<Item, Error> {
        bookkeeping_key::<S::Table>(&format!("~copy#{}#", self.name), source, |len, max| {
            self.problem(AggregateProblem::KeyTooLong { key: source.display(), len, max })
        })
    }

    /// The source item at `key`, strongly consistent.
    async fn read_source(&self, db: &Db<S::Table>, key: &SourceKey) -> Result<Option<S>, Error> {
        let item = read_item(db, key_item::<S::Table>(key), Op::GetItem).await?;
        match item {
            Some(item) if is_entity_item::<S>(&item) => from_item(item).map(Some),
            _ => Ok(None),
        }
    }

    /// The state at `key`, `None` when there is none.
    async fn read_state(&self, db: &Db<S::Table>, key: &Item) -> Result<Option<State>, Error> {
        let Some(item) = read_item(db, key.clone(), Op::GetItem).await? else { return Ok(None) };
        let corrupt = |attr: &str| {
            let key = crate::model::stored_key::<S::Table>(&item);
            self.problem(AggregateProblem::CorruptItem { key, attr: attr.into() })
        };
        let seq =
            string_attr(&item, SEQ_ATTR).and_then(Seq::parse).ok_or_else(|| corrupt(SEQ_ATTR))?;
        Ok(Some(State {
            seq,
            value: item.get(VALUE_ATTR).cloned(),
            gone: item.contains_key(GONE_ATTR),
            done: item.contains_key(DONE_ATTR),
        }))
    }

    /// Writes `next` at `key` if the stored state is still `stored` (its sequence number, or
    /// no item): true when it was not (a concurrent write got there first).
    async fn put_state(
        &self,
        db: &Db<S::Table>,
        key: &Item,
        stored: Option<&State>,
        next: &State,
    ) -> Result<bool, Error> {
        let mut item = key.clone();
        tag::<S::Table>(self.name, &mut item, "copy-source", "copy-source");
        item.insert(SEQ_ATTR.into(), s(next.seq.as_str().into()));
        if let Some(value) = &next.value {
            item.insert(VALUE_ATTR.into(), value.clone());
        }
        for (attr, on) in [(GONE_ATTR, next.gone), (DONE_ATTR, next.done)] {
            if on {
                item.insert(attr.into(), AttributeValue::Bool(true));
            }
        }
        let size = item_size(&item);
        if size > MAX_ITEM_BYTES {
            return Err(Error::ItemTooLarge { entity: self.name, size, max: MAX_ITEM_BYTES });
        }
        let put = put_if_seq::<S::Table>(item, stored.map(|s| &s.seq));
        match retry::send(db, Op::PutItem, put.put_item(db)?).await {
            Ok(_) => Ok(false),
            Err(e) => e.into_condition_failure().map(|_| true),
        }
    }

    /// Marks the state at `seq` copied to every target (nothing when it moved on meanwhile).
    async fn mark_done(&self, db: &Db<S::Table>, key: &Item, seq: &Seq) -> Result<(), Error> {
        let mut x = ExprBuilder::default();
        let expression =
            format!("SET {} = {}", x.name(DONE_ATTR), x.value(AttributeValue::Bool(true)));
        let condition = format!("{} = {}", x.name(SEQ_ATTR), x.value(s(seq.as_str().into())));
        let update = Action::update(key.clone(), expression).guarded(condition, x);
        match retry::send(db, Op::UpdateItem, update.update_item(db)?).await {
            Ok(_) => Ok(()),
            Err(e) => e.into_condition_failure().map(|_| ()),
        }
    }

    /// Copies `state` to every target of `source` whose copy differs: the targets read with
    /// one strongly consistent query, every write checked before the first is sent. The
    /// number of targets written.
    async fn copy_to_targets(
        &self,
        db: &Db<S::Table>,
        source: &S,
        state: &State,
    ) -> Result<usize, Error> {
        let key = source.key();
        let me = SourceKey { pk: key.pk().to_owned(), sk: key.sk().map(str::to_owned) };
        let items: Vec<Item> =
            (self.targets)(db, source).consistent().items().stream().try_collect().await?;
        let mut writes = Vec::new();
        for item in items.into_iter().filter(|i| is_entity_item::<T>(i)) {
            let target = from_item::<T>(item.clone())?;
            if self.source_key(&target)?.as_ref() == Some(&me) {
                writes.extend(self.target_write(&item, state)?);
            }
        }
        let mut written = 0;
        for write in writes {
            written += usize::from(self.send_target_write(db, write).await?);
        }
        Ok(written)
    }

    /// The write that brings target `item` (as stored, or as a record shows it) to `state`,
    /// checked against the item size limit; `None` when it holds it already.
    fn target_write(&self, item: &Item, state: &State) -> Result<Option<Action>, Error> {
        let (field, seq_attr) = (self.field_name(), self.seq_attr());
        let seq = padded(&state.seq);
        let holds_seq = matches!(item.get(&seq_attr), Some(AttributeValue::S(x)) if *x == seq);
        if holds_seq && item.get(field) == state.value.as_ref() {
            return Ok(None);
        }
        let mut after = item.clone();
        match &state.value {
            Some(value) => after.insert(field.into(), value.clone()),
            None => after.remove(field),
        };
        after.insert(seq_attr.clone(), s(seq.clone()));
        let size = item_size(&after);
        if size > MAX_ITEM_BYTES {
            return Err(Error::ItemTooLarge { entity: T::NAME, size, max: MAX_ITEM_BYTES });
        }
        let Some(target) = SourceKey::of::<S::Table>(item) else { return Ok(None) };
        let mut x = ExprBuilder::default();
        let (f, cp, at) = (x.name(field), x.name(&seq_attr), x.value(s(seq)));
        // Written where the copy is older, or of the same state but changed since (the image
        // a record shows may be older than the item: the condition decides on the item).
        let (expression, differs) = match &state.value {
            Some(value) => {
                let v = x.value(value.clone());
                (
                    format!("SET {f} = {v}, {cp} = {at}"),
                    format!("attribute_not_exists({f}) OR {f} <> {v}"),
                )
            }
            None => (format!("REMOVE {f} SET {cp} = {at}"), format!("attribute_exists({f})")),
        };
        let mut condition = format!(
            "attribute_exists({}) AND (attribute_not_exists({cp}) OR {cp} < {at} OR ({cp} = {at} AND ({differs})))",
            x.name(S::Table::PK)
        );
        if let Identity::Tagged(tag) = T::IDENTITY {
            let (attr, value) = (x.name(tag.attr), x.value(s(tag.value.into())));
            condition.push_str(&format!(" AND {attr} = {value}"));
        }
        let update = Action::update(key_item::<S::Table>(&target), expression);
        Ok(Some(update.guarded(condition, x)))
    }

    /// Sends a target's write: false when its condition failed (the target is gone, or holds
    /// a newer copy or this one).
    async fn send_target_write(&self, db: &Db<S::Table>, write: Action) -> Result<bool, Error> {
        match retry::send(db, Op::UpdateItem, write.update_item(db)?).await {
            Ok(_) => Ok(true),
            Err(e) => e.into_condition_failure().map(|_| false),
        }
    }
}

/// A sequence number as a target stores it: 40 digits, zero-padded, so that the service's
/// comparison of strings orders them as numbers.
fn padded(seq: &Seq) -> String {
    format!("{:0>40}", seq.as_str())
}

/// The key attributes of the item at `key`.
fn key_item<T: Table>(key: &SourceKey) -> Item {
    let mut item = Item::new();
    item.insert(T::PK.into(), s(key.pk.clone()));
    if let (Some(attr), Some(sk)) = (T::SK, &key.sk) {
        item.insert(attr.into(), s(sk.clone()));
    }
    item
}
