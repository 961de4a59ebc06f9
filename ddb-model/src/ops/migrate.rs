//! `Db::migrate`: rewrites the items of an entity stored with an older schema version, in
//! place, with a parallel scan; resumable from a checkpoint.

use crate::ops::startable::startable;
use std::marker::PhantomData;
use std::sync::{Mutex, MutexGuard, PoisonError};

use futures_util::stream::{self, StreamExt, TryStreamExt};
use serde::{Deserialize, Serialize};

use super::WriteKind;
use super::put::{Put, Target};
use super::scan::outdated_page;
use crate::db::Db;
use crate::error::Error;
use crate::error::RequestProblem;
use crate::item::Item;
use crate::key::Key;
use crate::model::{Entity, Table, from_item, key_display, stored_version, string_attr};
use crate::ops::{Running, key_item};

/// Segments of a migration unless [`Migrate::segments`] says otherwise.
pub const DEFAULT_MIGRATE_SEGMENTS: u32 = 4;
/// Most segments of a migration (DynamoDB takes up to 1,000,000; a checkpoint keeps one
/// position per segment).
pub const MAX_MIGRATE_SEGMENTS: u32 = 10_000;
/// Writes in flight per segment.
const WRITES_PER_SEGMENT: usize = 8;
/// Times an item that concurrent writers keep changing is read again and upgraded before
/// the migration leaves it (counted as skipped).
const ATTEMPTS_PER_ITEM: usize = 3;

/// Counts of a migration, cumulative over its runs (a resumed run starts from the counts its
/// checkpoint holds).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MigrateCounts {
    /// Items the scan evaluated, of every entity type (the service's `ScannedCount`): the
    /// progress through the table.
    pub scanned: u64,
    /// Items upgraded and written back at the current version.
    pub upgraded: u64,
    /// Items read at an older version that a concurrent writer (or another run) had brought
    /// to the current version by the time the migration wrote: left as that writer stored
    /// them.
    pub already_current: u64,
    /// Items a concurrent writer deleted, replaced with another entity's item, or kept
    /// changing while the migration tried to write them (three times): left alone.
    pub skipped: u64,
    /// Items whose upgrade or write was refused (the upgrade function failed, the result does
    /// not decode or is over a limit): left as they were, listed in the report.
    pub failed: u64,
}

/// Where one segment of a migration stands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum SegmentPosition {
    /// Not started.
    Start,
    /// Every item up to this primary key (in the segment's scan order) is done.
    After {
        /// The partition key.
        pk: String,
        /// The sort key (on a table with one).
        sk: Option<String>,
    },
    /// The segment is done.
    Done,
}

/// Where a migration stands: one position per segment, and the counts so far. Serializable,
/// so that the caller can keep it (a file, an item, a job's state) and resume an
/// interrupted migration with [`Migrate::resume`]. Every [`MigrateProgress`] carries the
/// checkpoint after the page it reports, whose items are all done.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MigrateCheckpoint {
    entity: String,
    version: u32,
    segments: Vec<SegmentPosition>,
    counts: MigrateCounts,
}

impl MigrateCheckpoint {
    /// The entity migrated.
    pub fn entity(&self) -> &str {
        &self.entity
    }

    /// The schema version the items are upgraded to.
    pub fn version(&self) -> u32 {
        self.version
    }

    /// The position of every segment.
    pub fn segments(&self) -> &[SegmentPosition] {
        &self.segments
    }

    /// The counts up to this checkpoint.
    pub fn counts(&self) -> MigrateCounts {
        self.counts
    }

    /// True when every segment is done.
    pub fn is_done(&self) -> bool {
        self.segments.iter().all(|s| *s == SegmentPosition::Done)
    }
}

/// How far a migration got, given to the [`Migrate::on_progress`] callback after every page
/// of every segment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MigrateProgress {
    /// The counts so far.
    pub counts: MigrateCounts,
    /// Segments done.
    pub segments_done: u32,
    /// Segments in all.
    pub segments: u32,
    /// The checkpoint to resume from if the migration is interrupted now.
    pub checkpoint: MigrateCheckpoint,
}

/// An item a migration could not upgrade.
#[derive(Debug)]
pub struct MigrateFailure {
    /// The item's partition key.
    pub pk: String,
    /// Its sort key.
    pub sk: Option<String>,
    /// Why: [`Error::SchemaUpgrade`] (the upgrade function failed), [`Error::Deserialize`]
    /// (the upgraded item does not decode), a limit of the written item, ...
    pub error: Error,
}

/// What a migration did.
#[derive(Debug)]
pub struct MigrateReport {
    /// The counts, over every run since the migration started.
    pub counts: MigrateCounts,
    /// The items of this run that could not be upgraded (a new migration tries them again).
    pub failures: Vec<MigrateFailure>,
    /// The final checkpoint (every segment done).
    pub checkpoint: MigrateCheckpoint,
}

/// Rewrites every item of `E` stored with an older schema version than `E` declares
/// (`#[entity(schema = .., upgrade = ..)]`) at the current version. Made by
/// [`Db::migrate`].
///
/// A parallel scan ([`segments`](Migrate::segments), default 4, all running at once) reads
/// only `E`'s items of an older version (a filter; the scan still evaluates, and is billed
/// for, every item of the table). Each item is upgraded as a read would upgrade it and
/// written back whole, through the same path as [`Db::put`] (index keys, version field,
/// limits), **conditioned on the schema version it was read with**: a concurrent writer
/// wins. When that condition fails, the item as stored is read from the failure (no extra
/// request) and, if it is still old, upgraded again; if it is current, it is counted as
/// [`already_current`](MigrateCounts::already_current). The write keeps the item's
/// timestamps (`created_at` / `updated_at` as stored): an upgrade changes the item's shape,
/// not its data. With a version field (`#[entity(version = ..)]`) the write increments the
/// version like any write, so a writer holding the item as read before the migration gets a
/// version conflict instead of overwriting the upgrade.
///
/// **Resumable**: after every page the [`on_progress`](Migrate::on_progress) callback gets
/// the counts and a [`MigrateCheckpoint`] (serde-serializable) where every item before each
/// segment's position is done. A run that stopped (a transport failure, a crash) is resumed
/// from the last checkpoint the caller kept: pages after it are read again, and the items of
/// them already upgraded are left out by the filter, so every item is upgraded once.
///
/// Items that cannot be upgraded (the upgrade function fails, the result does not decode or
/// breaks a limit) are reported with their keys in [`MigrateReport::failures`] and left as
/// they were; the run goes on, unless [`stop_on_failure`](Migrate::stop_on_failure) asks to
/// stop at the first (the error is returned, the checkpoint before its page stands). A
/// service failure (after the retries) ends the run with the error.
///
/// Requests: one `Scan` per page of each segment, one `PutItem` per outdated item (a second
/// one for an item a concurrent writer changed while it was still old).
///
/// ```
/// use ddb_model::prelude::*;
/// use ddb_model::aws_sdk_dynamodb::types::AttributeValue;
/// use ddb_model::{Item, error::UpgradeError};
/// use serde::{Deserialize, Serialize};
///
/// // Version 1 stored a `name`; version 2 stores `first` and `last`.
/// #[derive(Entity, Serialize, Deserialize, Debug, PartialEq)]
/// #[entity(pk = "USER#<id>", sk = "PROFILE", schema = 2, upgrade = upgrade_user)]
/// struct User { id: String, first: String, last: String }
///
/// fn upgrade_user(from: u32, item: &mut Item) -> Result<(), UpgradeError> {
///     let Some(AttributeValue::S(name)) = item.remove("name") else {
///         return Err(format!("version {from} without a `name`").into());
///     };
///     let (first, last) = name.split_once(' ').unwrap_or((&name, ""));
///     item.insert("first".into(), AttributeValue::S(first.into()));
///     item.insert("last".into(), AttributeValue::S(last.into()));
///     Ok(())
/// }
///
/// async fn demo(db: &Db) -> Result<(), Error> {
///     // An item written before the entity declared versions: version 1.
///     let mut old = Item::new();
///     for (k, v) in [("pk", "USER#ada"), ("sk", "PROFILE"), ("_type", "User"), ("id", "ada"), ("name", "Ada Lovelace")] {
///         old.insert(k.into(), AttributeValue::S(v.into()));
///     }
///     db.client().put_item().table_name(db.table_name()).set_item(Some(old)).send().await.unwrap();
///
///     // Reads upgrade it, without writing it.
///     assert_eq!(User::get(db, "ada").await?.unwrap().last, "Lovelace");
///
///     // The migration writes it back at version 2.
///     let report = db.migrate::<User>().segments(2).on_progress(|p| println!("{:?}", p.counts)).await?;
///     assert_eq!(report.counts.upgraded, 1);
///     assert!(report.failures.is_empty());
///     Ok(())
/// }
/// # #[cfg(feature = "local")]
/// # #[tokio::main]
/// # async fn main() -> Result<(), Error> {
/// #     demo(&ddb_model::local::isolated_db().await?).await
/// # }
/// # #[cfg(not(feature = "local"))]
/// # fn main() {}
/// ```
#[must_use = "a migration does nothing until it is awaited"]
pub struct Migrate<'a, E: Entity> {
    db: &'a Db<E::Table>,
    segments: u32,
    page_size: Option<u32>,
    resume: Option<MigrateCheckpoint>,
    progress: Option<ProgressFn<'a>>,
    stop_on_failure: bool,
    _entity: PhantomData<fn() -> E>,
    running: Running<'a, Result<MigrateReport, Error>>,
}

type ProgressFn<'a> = Box<dyn FnMut(&MigrateProgress) + Send + 'a>;

impl<T: Table> Db<T> {
    /// Starts a migration of entity `E`'s items to its current schema version (see
    /// [`Migrate`]).
    pub fn migrate<E: Entity<Table = T>>(&self) -> Migrate<'_, E> {
        Migrate {
            db: self,
            segments: DEFAULT_MIGRATE_SEGMENTS,
            page_size: None,
            resume: None,
            progress: None,
            stop_on_failure: false,
            _entity: PhantomData,
            running: Running::default(),
        }
    }
}

impl<'a, E: Entity> Migrate<'a, E> {
    /// Splits the table into `n` scan segments, all read at once (1 to
    /// [`MAX_MIGRATE_SEGMENTS`]; default [`DEFAULT_MIGRATE_SEGMENTS`]). A resumed migration
    /// keeps the segments of its checkpoint.
    pub fn segments(mut self, n: u32) -> Self {
        self.segments = n;
        self
    }

    /// Items evaluated per `Scan` request (before the filter); by default the service's
    /// 1 MB pages. Smaller pages mean more frequent checkpoints.
    pub fn page_size(mut self, n: u32) -> Self {
        self.page_size = Some(n.max(1));
        self
    }

    /// Resumes from a checkpoint of an earlier run (of the same entity and version:
    /// [`Error::InvalidCursor`] otherwise, before anything is sent).
    pub fn resume(mut self, checkpoint: MigrateCheckpoint) -> Self {
        self.resume = Some(checkpoint);
        self
    }

    /// Calls `progress` after every page of every segment (from the tasks of the run, one
    /// call at a time).
    pub fn on_progress(mut self, progress: impl FnMut(&MigrateProgress) + Send + 'a) -> Self {
        self.progress = Some(Box::new(progress));
        self
    }

    /// Stops at the first item that cannot be upgraded, returning its error, instead of
    /// reporting it and going on.
    pub fn stop_on_failure(mut self) -> Self {
        self.stop_on_failure = true;
        self
    }

    /// The checkpoint to start from, checked against `E`.
    fn checkpoint(&self) -> Result<MigrateCheckpoint, Error> {
        let Some(schema) = E::SCHEMA else {
            return Err(Error::InvalidRequest {
                path: String::new(),
                problem: RequestProblem::NoSchema { entity: E::NAME },
            });
        };
        match &self.resume {
            Some(checkpoint) => {
                use crate::error::{CheckpointMismatch as M, CursorReason};
                let mismatch = if checkpoint.entity != E::NAME {
                    Some(M::Entity(checkpoint.entity.clone()))
                } else if checkpoint.version != schema.version {
                    Some(M::Version(checkpoint.version))
                } else if checkpoint.segments.is_empty()
                    || checkpoint.segments.len() > MAX_MIGRATE_SEGMENTS as usize
                {
                    Some(M::Segments(checkpoint.segments.len()))
                } else {
                    None
                };
                match mismatch {
                    Some(mismatch) => Err(Error::InvalidCursor {
                        reason: CursorReason::Checkpoint {
                            entity: E::NAME,
                            version: schema.version,
                            mismatch,
                        },
                    }),
                    None => Ok(checkpoint.clone()),
                }
            }
            None if (1..=MAX_MIGRATE_SEGMENTS).contains(&self.segments) => Ok(MigrateCheckpoint {
                entity: E::NAME.to_owned(),
                version: schema.version,
                segments: vec![SegmentPosition::Start; self.segments as usize],
                counts: MigrateCounts::default(),
            }),
            None => Err(Error::InvalidRequest {
                path: "segments".to_owned(),
                problem: RequestProblem::OutOfRange {
                    value: i64::from(self.segments),
                    min: 1,
                    max: i64::from(MAX_MIGRATE_SEGMENTS),
                },
            }),
        }
    }

    /// Runs the migration to its end.
    pub async fn send(self) -> Result<MigrateReport, Error> {
        let checkpoint = self.checkpoint()?;
        let segments = u32::try_from(checkpoint.segments.len()).unwrap_or(MAX_MIGRATE_SEGMENTS);
        let Migrate { db, page_size, progress, stop_on_failure, .. } = self;
        let state = Mutex::new(State { checkpoint, failures: Vec::new(), progress });
        let run: Run<'_, '_, E> = Run { db, segments, page_size, stop_on_failure, state: &state };
        stream::iter((0..segments).map(Ok))
            .try_for_each_concurrent(None, |segment| run.segment(segment))
            .await?;
        let state = state.into_inner().unwrap_or_else(PoisonError::into_inner);
        Ok(MigrateReport {
            counts: state.checkpoint.counts,
            failures: state.failures,
            checkpoint: state.checkpoint,
        })
    }
}

startable!(writes
    ['a, E: Entity] Migrate<'a, E> => Result<MigrateReport, Error>,
    |migrate| migrate.db.migrate(),
    send
);

/// What the segments of a run share.
struct State<'a> {
    checkpoint: MigrateCheckpoint,
    failures: Vec<MigrateFailure>,
    progress: Option<ProgressFn<'a>>,
}

/// The shared state. A panic of the progress callback unwinds out of `send` (every segment
/// runs in its one future), so a poisoned lock is never seen again: it is not an error.
fn lock<'m, 'a>(state: &'m Mutex<State<'a>>) -> MutexGuard<'m, State<'a>> {
    state.lock().unwrap_or_else(PoisonError::into_inner)
}

struct Run<'r, 'a, E: Entity> {
    db: &'a Db<E::Table>,
    segments: u32,
    page_size: Option<u32>,
    stop_on_failure: bool,
    state: &'r Mutex<State<'a>>,
}

/// What became of one item.
enum Outcome {
    Upgraded,
    AlreadyCurrent,
    Skipped,
    Failed(MigrateFailure),
}

impl<E: Entity> Run<'_, '_, E> {
    /// Every page of `segment` from its position.
    async fn segment(&self, segment: u32) -> Result<(), Error> {
        let index = segment as usize;
        loop {
            let position = {
                let state = lock(self.state);
                state.checkpoint.segments.get(index).cloned().unwrap_or(SegmentPosition::Done)
            };
            let Some(start) = start_of::<E>(position) else { return Ok(()) };
            let (items, scanned, next) =
                outdated_page::<E>(self.db, segment, self.segments, self.page_size, start).await?;
            let next = match next {
                Some(key) => position_of::<E>(&key)?,
                None => SegmentPosition::Done,
            };
            let outcomes: Vec<Outcome> = stream::iter(items)
                .map(|item| upgrade_one::<E>(self.db, item))
                .buffer_unordered(WRITES_PER_SEGMENT)
                .try_collect()
                .await?;

            let mut state = lock(self.state);
            let State { checkpoint, failures, progress } = &mut *state;
            let counts = &mut checkpoint.counts;
            counts.scanned += scanned as u64;
            for outcome in outcomes {
                match outcome {
                    Outcome::Upgraded => counts.upgraded += 1,
                    Outcome::AlreadyCurrent => counts.already_current += 1,
                    Outcome::Skipped => counts.skipped += 1,
                    Outcome::Failed(failure) if self.stop_on_failure => return Err(failure.error),
                    Outcome::Failed(failure) => {
                        counts.failed += 1;
                        failures.push(failure);
                    }
                }
            }
            if let Some(slot) = checkpoint.segments.get_mut(index) {
                *slot = next;
            }
            if let Some(progress) = progress {
                let done = checkpoint.segments.iter().filter(|s| **s == SegmentPosition::Done);
                progress(&MigrateProgress {
                    counts: checkpoint.counts,
                    segments_done: u32::try_from(done.count()).unwrap_or(u32::MAX),
                    segments: self.segments,
                    checkpoint: checkpoint.clone(),
                });
            }
        }
    }
}

/// Upgrades one item read at an older version and writes it back, conditioned on that
/// version; reads the stored item from a failed condition and tries again. `Err` only for
/// failures that end the run (the service, the transport).
async fn upgrade_one<E: Entity>(db: &Db<E::Table>, mut item: Item) -> Result<Outcome, Error> {
    let current = E::SCHEMA.map_or(crate::model::UNVERSIONED, |s| s.version);
    for _ in 0..ATTEMPTS_PER_ITEM {
        let failed = |item: &Item, error: Error| {
            let text = |attr: &str| string_attr(item, attr).map(str::to_owned);
            Outcome::Failed(MigrateFailure {
                pk: text(<E::Table as Table>::PK).unwrap_or_default(),
                sk: <E::Table as Table>::SK.and_then(text),
                error,
            })
        };
        let found = match stored_version::<E>(&item) {
            Ok(found) => found,
            Err(e) => return Ok(failed(&item, e)),
        };
        if found == current {
            return Ok(Outcome::AlreadyCurrent);
        }
        if found > current {
            // Newer code wrote it meanwhile: not this migration's to touch.
            return Ok(Outcome::Skipped);
        }
        let entity: E = match from_item::<E>(item.clone()) {
            Ok(entity) => entity,
            Err(e) => return Ok(failed(&item, e)),
        };
        let write = Put::new(db, Target::Shared(&entity), WriteKind::Upgrade { from: found })
            .keeping_times()
            .send()
            .await;
        match write {
            Ok(()) => return Ok(Outcome::Upgraded),
            Err(Error::ConditionFailed { current: Some(stored), .. }) => item = *stored,
            Err(
                Error::ConditionFailed { current: None, .. }
                | Error::NotFound { .. }
                | Error::WrongEntityType { .. },
            ) => return Ok(Outcome::Skipped),
            Err(e) if e.is_invalid_input() => return Ok(failed(&item, e)),
            Err(e) => return Err(e),
        }
    }
    Ok(Outcome::Skipped)
}

/// The position after a page: its `LastEvaluatedKey` (string keys: the library writes them).
/// Where a segment's next page starts: `None` when it is done, else the exclusive start key
/// (`None` at the segment's start).
pub(crate) fn start_of<E: Entity>(position: SegmentPosition) -> Option<Option<Item>> {
    match position {
        SegmentPosition::Done => None,
        SegmentPosition::Start => Some(None),
        SegmentPosition::After { pk, sk } => Some(Some(key_item(&Key::<E>::from_parts(pk, sk)))),
    }
}

pub(crate) fn position_of<E: Entity>(key: &Item) -> Result<SegmentPosition, Error> {
    let text = |attr: &str| string_attr(key, attr).map(str::to_owned);
    let pk = text(<E::Table as Table>::PK);
    let sk = <E::Table as Table>::SK.and_then(text);
    match pk {
        Some(pk) if sk.is_some() || <E::Table as Table>::SK.is_none() => {
            Ok(SegmentPosition::After { pk, sk })
        }
        _ => Err(Error::CorruptItem {
            entity: E::NAME,
            key: key_display(pk.as_deref(), sk.as_deref()),
            reason: crate::error::CorruptReason::ScanPosition,
        }),
    }
}
