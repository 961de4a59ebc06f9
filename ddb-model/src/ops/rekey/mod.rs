//! `Db::rekey`: moves the items of an entity declared with `#[entity(rekey(pk = ..))]` from
//! their old key layout to the entity's, in two resumable steps (copy, then remove the old
//! copies), each a parallel scan whose writes are fenced transactions; and the phase a
//! deployment's writes and reads are in while it runs ([`RekeyPhase`]).

mod paired;
mod run;

use std::marker::PhantomData;
use std::sync::Mutex;

use futures_util::stream::{self, TryStreamExt};
use serde::{Deserialize, Serialize};

use super::migrate::{MAX_MIGRATE_SEGMENTS, SegmentPosition};
use crate::db::Db;
use crate::error::{CheckpointMismatch, CursorReason, Error, RekeyProblem, RequestProblem};
use crate::model::{Entity, Table};
use crate::ops::Running;
use crate::ops::startable::startable;

pub use crate::model::RekeyPhase;
pub(crate) use paired::{
    PAIRED, READS_OLD, phase_key, read_copy, read_copy_of, refuse_in, refuse_named, run_paired,
};

/// Segments of a re-key unless [`Rekey::segments`] says otherwise.
pub const DEFAULT_REKEY_SEGMENTS: u32 = 4;

/// Copies (or removals) per `TransactWriteItems` of a re-key: two actions each (the write
/// and the check of the other copy) and the fence check make 99 of the 100 actions a
/// transaction takes.
pub const REKEY_BATCH: usize = 49;

/// Which step of a re-key a run makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum RekeyStep {
    /// Copy each item of the old layout to its key in the new one.
    Copy,
    /// Remove each item of the old layout whose new copy exists.
    Cleanup,
}

/// Counts of a re-key step, cumulative over its runs (a resumed run starts from its
/// checkpoint's).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RekeyCounts {
    /// Items the scan evaluated, of every entity type (the service's `ScannedCount`).
    pub scanned: u64,
    /// Old items copied to their new key.
    pub copied: u64,
    /// Old items whose new copy existed already (written through the library, or by an
    /// earlier run): left as they are.
    pub already_new: u64,
    /// Old items removed by the cleanup.
    pub removed: u64,
    /// Old items the cleanup left because they have no new copy (written by a process in the
    /// `Old` phase after the copy passed them): copy again, then clean up.
    pub not_copied: u64,
    /// Items a concurrent writer deleted after the scan read them: left deleted.
    pub gone: u64,
    /// Items a concurrent writer changed after the scan read them, copied (or removed) from
    /// the item as it was then.
    pub changed: u64,
    /// Items that could not be read as the entity (listed in the report), left as they are.
    pub failed: u64,
}

/// Where a re-key step stands: one position per segment and the counts so far.
/// Serializable: keep it and resume an interrupted step with [`Rekey::resume`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RekeyCheckpoint {
    entity: String,
    step: RekeyStep,
    segments: Vec<SegmentPosition>,
    counts: RekeyCounts,
}

impl RekeyCheckpoint {
    /// The entity re-keyed.
    pub fn entity(&self) -> &str {
        &self.entity
    }

    /// The step.
    pub fn step(&self) -> RekeyStep {
        self.step
    }

    /// The position of every segment.
    pub fn segments(&self) -> &[SegmentPosition] {
        &self.segments
    }

    /// The counts up to this checkpoint.
    pub fn counts(&self) -> RekeyCounts {
        self.counts
    }

    /// True when every segment is done.
    pub fn is_done(&self) -> bool {
        self.segments.iter().all(|s| *s == SegmentPosition::Done)
    }
}

/// How far a re-key step got, given to [`Rekey::on_progress`] after every page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RekeyProgress {
    /// The counts so far.
    pub counts: RekeyCounts,
    /// Segments done.
    pub segments_done: u32,
    /// Segments in all.
    pub segments: u32,
    /// The checkpoint to resume from if the run stops now.
    pub checkpoint: RekeyCheckpoint,
}

/// An item a re-key could not read as its entity (a [`Deserialize`](Error::Deserialize) or
/// [`SchemaUpgrade`](Error::SchemaUpgrade) error, a key its layout did not write, ...): the
/// same record as a migration's.
pub type RekeyFailure = crate::ops::migrate::MigrateFailure;

/// What a re-key step did.
#[derive(Debug)]
pub struct RekeyReport {
    /// The counts over every run of the step.
    pub counts: RekeyCounts,
    /// The items of this run that could not be read as the entity.
    pub failures: Vec<RekeyFailure>,
    /// The final checkpoint (every segment done).
    pub checkpoint: RekeyCheckpoint,
}

/// Moves the items of `E` from the key layout `#[entity(rekey(pk = .., sk = ..))]` declares
/// to `E`'s own. Made by [`Db::rekey`]; see the re-keying chapter of the guide (`docs/rekeying.md`) for the
/// whole procedure and [`RekeyPhase`] for the phases the deployments go through.
///
/// The **copy** ([`RekeyStep::Copy`], the default) scans `E`'s items in parallel
/// [`segments`](Rekey::segments), keeps those whose keys the old layout wrote, and writes
/// each to its new key, [`REKEY_BATCH`] items per `TransactWriteItems`. Each item is two
/// actions: a put of the new copy (the item as stored, with its new keys and its index keys
/// computed again; version, timestamps, expiry, type tag and constants as they are),
/// conditioned on no new copy existing (a newer one written through the library stays), and
/// a `ConditionCheck` that the old item is still exactly as read (so an item a writer
/// changed or deleted after the scan read it is not copied stale, nor brought back). The
/// **cleanup** ([`cleanup`](Rekey::cleanup)) removes each old item that is still as read and
/// whose new copy exists (a `ConditionCheck`), the same way.
///
/// Every transaction also checks the re-key's control item (one item per entity, written
/// when a run starts): a run that another run took over (a second runner, or a resume from a
/// checkpoint) gets [`RekeyProblem::Superseded`] and none of its later transactions land.
/// Progress and resuming work as for [`Db::migrate`]: a [`RekeyCheckpoint`] after every
/// page.
///
/// Requests: one `PutItem` (the control item) and one `DeleteItem` (removing it at the
/// end), one `Scan` per page of each segment, and one `TransactWriteItems` per
/// [`REKEY_BATCH`] old items of a page (more when concurrent writers cancel one: the items
/// they changed are sent again).
#[must_use = "a re-key does nothing until it is awaited"]
pub struct Rekey<'a, E: Entity> {
    db: &'a Db<E::Table>,
    step: RekeyStep,
    segments: u32,
    page_size: Option<u32>,
    resume: Option<RekeyCheckpoint>,
    progress: Option<ProgressFn<'a>>,
    _entity: PhantomData<fn() -> E>,
    running: Running<'a, Result<RekeyReport, Error>>,
}

type ProgressFn<'a> = Box<dyn FnMut(&RekeyProgress) + Send + 'a>;

impl<T: Table> Db<T> {
    /// Starts the copy step of a re-key of entity `E` (see [`Rekey`]).
    pub fn rekey<E: Entity<Table = T>>(&self) -> Rekey<'_, E> {
        Rekey {
            db: self,
            step: RekeyStep::Copy,
            segments: DEFAULT_REKEY_SEGMENTS,
            page_size: None,
            resume: None,
            progress: None,
            _entity: PhantomData,
            running: Running::default(),
        }
    }
}

impl<'a, E: Entity> Rekey<'a, E> {
    /// Runs the cleanup step instead of the copy: removes the old copies.
    pub fn cleanup(mut self) -> Self {
        self.step = RekeyStep::Cleanup;
        self
    }

    /// Splits the table into `n` scan segments, all read at once (1 to
    /// [`MAX_MIGRATE_SEGMENTS`]; default [`DEFAULT_REKEY_SEGMENTS`]). A resumed run keeps its
    /// checkpoint's.
    pub fn segments(mut self, n: u32) -> Self {
        self.segments = n;
        self
    }

    /// Items evaluated per `Scan` request; by default the service's 1 MB pages.
    pub fn page_size(mut self, n: u32) -> Self {
        self.page_size = Some(n.max(1));
        self
    }

    /// Resumes from a checkpoint of an earlier run of the same entity and step
    /// ([`Error::InvalidCursor`] otherwise, before anything is sent). The resumed run takes
    /// the re-key over: a run still going gets [`RekeyProblem::Superseded`].
    pub fn resume(mut self, checkpoint: RekeyCheckpoint) -> Self {
        self.resume = Some(checkpoint);
        self
    }

    /// Calls `progress` after every page of every segment (one call at a time).
    pub fn on_progress(mut self, progress: impl FnMut(&RekeyProgress) + Send + 'a) -> Self {
        self.progress = Some(Box::new(progress));
        self
    }

    /// The checkpoint to start from, checked against `E` and the step.
    fn checkpoint(&self) -> Result<RekeyCheckpoint, Error> {
        if E::REKEY.is_none() {
            return Err(Error::Rekey { entity: E::NAME, problem: RekeyProblem::NotDeclared });
        }
        let mismatch = |mismatch| Error::InvalidCursor {
            reason: CursorReason::RekeyCheckpoint { entity: E::NAME, mismatch },
        };
        match &self.resume {
            Some(c) if c.entity != E::NAME => {
                Err(mismatch(CheckpointMismatch::Entity(c.entity.clone())))
            }
            Some(c) if c.step != self.step => Err(mismatch(CheckpointMismatch::Step)),
            Some(c)
                if c.segments.is_empty() || c.segments.len() > MAX_MIGRATE_SEGMENTS as usize =>
            {
                Err(mismatch(CheckpointMismatch::Segments(c.segments.len())))
            }
            Some(c) => Ok(c.clone()),
            None if (1..=MAX_MIGRATE_SEGMENTS).contains(&self.segments) => Ok(RekeyCheckpoint {
                entity: E::NAME.to_owned(),
                step: self.step,
                segments: vec![SegmentPosition::Start; self.segments as usize],
                counts: RekeyCounts::default(),
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

    /// Runs the step to its end.
    pub async fn send(self) -> Result<RekeyReport, Error> {
        let checkpoint = self.checkpoint()?;
        let segments = u32::try_from(checkpoint.segments.len()).unwrap_or(MAX_MIGRATE_SEGMENTS);
        let Rekey { db, step, page_size, progress, .. } = self;
        let token = crate::ops::idempotency_token();
        run::take_over::<E>(db, &token, step).await?;
        let state = Mutex::new(run::State { checkpoint, failures: Vec::new(), progress });
        let run: run::Run<'_, '_, E> =
            run::Run { db, step, segments, page_size, token: &token, state: &state };
        stream::iter((0..segments).map(Ok))
            .try_for_each_concurrent(None, |segment| run.segment(segment))
            .await?;
        run::release::<E>(db, &token).await?;
        let state = state.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner);
        Ok(RekeyReport {
            counts: state.checkpoint.counts,
            failures: state.failures,
            checkpoint: state.checkpoint,
        })
    }
}

startable!(writes
    ['a, E: Entity] Rekey<'a, E> => Result<RekeyReport, Error>,
    |rekey| rekey.db.rekey(),
    send
);
