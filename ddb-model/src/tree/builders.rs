//! The builders every tree shares: [`Move`], [`Delete`] and [`Descendants`], generic over the
//! strategy. Their options are the same on every strategy; `send` hands the builder to the
//! strategy's [`Strategy`] steps. Like every builder of the crate, each is a future itself
//! (`crate::ops::Startable`): awaiting it sends it.

use std::ops::{Bound, RangeBounds};

use futures_util::stream::BoxStream;

use std::mem::replace;

use super::handle::{Strategy, Tree};
use super::op::{OpReport, Progress, ProgressFn, quiet};
use crate::error::Error;
use crate::model::Entity;
use crate::ops::{BoxFuture, Running, Startable, builder_future};

/// What [`Move`] and [`Delete`] share: `new`, `on_progress`, `transaction_limit` (capped at
/// the strategy's `$limit`), `send` (the strategy's `$send` step) and being a future.
macro_rules! large_operation {
    ($name:ident { $($field:ident: $ty:ty),* }, $limit:ident, $send:ident,
     $progress_doc:literal, $limit_doc:literal, $send_doc:literal) => {
        impl<'a, E: Entity, S: Strategy<E>> $name<'a, 'static, E, S> {
            pub(crate) fn new(tree: &Tree<'a, E, S>, $($field: $ty),*) -> Self {
                let (progress, limit, running) = (quiet(), S::$limit, Running::default());
                $name { tree: tree.clone(), $($field,)* progress, limit, running }
            }
        }

        impl<'a, 'p, E: Entity, S: Strategy<E>> $name<'a, 'p, E, S> {
            #[doc = $progress_doc]
            pub fn on_progress<'q>(
                self,
                f: impl FnMut(Progress) + Send + 'q,
            ) -> $name<'a, 'q, E, S> {
                let $name { tree, $($field,)* limit, .. } = self;
                let (progress, running) = (Box::new(f) as ProgressFn<'q>, Running::default());
                $name { tree, $($field,)* progress, limit, running }
            }

            #[doc = $limit_doc]
            pub fn transaction_limit(mut self, n: usize) -> Self {
                self.limit = n.min(S::$limit);
                self
            }

            #[doc = $send_doc]
            pub fn send(self) -> BoxFuture<'a, Result<OpReport, Error>>
            where
                'p: 'a,
            {
                S::$send(self)
            }
        }

        impl<'a, 'p: 'a, E: Entity, S: Strategy<E>> Startable<'a> for $name<'a, 'p, E, S> {
            type Raw = Result<OpReport, Error>;
            const DRY_SENDS_READS: bool = true;
            fn running(&mut self) -> &mut Running<'a, Self::Raw> {
                &mut self.running
            }
            fn take_settings(&mut self) -> Self {
                let (tree, limit) = (self.tree.clone(), self.limit);
                $(let $field = self.$field.clone();)*
                let progress = replace(&mut self.progress, quiet());
                $name { tree, $($field,)* progress, limit, running: Running::default() }
            }
            fn start(self) -> BoxFuture<'a, Self::Raw> {
                S::$send(self)
            }
        }

        builder_future!(
            ['a, 'p: 'a, E: Entity, S: Strategy<E>] $name<'a, 'p, E, S> => Result<OpReport, Error>,
            |r| r
        );
    };
}

#[doc = include_str!("docs/move.md")]
#[must_use = "a move does nothing until it is awaited"]
pub struct Move<'a, 'p, E: Entity, S: Strategy<E>> {
    pub(crate) tree: Tree<'a, E, S>,
    pub(crate) from: S::Node,
    pub(crate) to: S::Dest,
    pub(crate) progress: ProgressFn<'p>,
    pub(crate) limit: usize,
    running: Running<'a, Result<OpReport, Error>>,
}

large_operation!(
    Move { from: S::Node, to: S::Dest },
    MOVE_LIMIT,
    send_move,
    "Calls `f` as the move advances: after every transaction (or step of 100 nodes) of a large \
     move, once per phase for a transactional one (an adjacency move: once, phase \
     [`OpPhase::Switch`](super::OpPhase::Switch)).",
    "Subtrees of more than `n` nodes move through the strategy's resumable protocol (`0`: \
     always), capped at what one transaction holds. An adjacency move is one transaction \
     whatever the subtree (nothing below the node is written) and has no such protocol: it \
     ignores the limit.",
    "Sends the move."
);

#[doc = include_str!("docs/delete.md")]
#[must_use = "a delete does nothing until it is awaited"]
pub struct Delete<'a, 'p, E: Entity, S: Strategy<E>> {
    pub(crate) tree: Tree<'a, E, S>,
    pub(crate) root: S::Node,
    pub(crate) progress: ProgressFn<'p>,
    pub(crate) limit: usize,
    running: Running<'a, Result<OpReport, Error>>,
}

large_operation!(
    Delete { root: S::Node },
    DELETE_LIMIT,
    send_delete,
    "Calls `f` as the delete advances: after every transaction (or step of 100 nodes) of a \
     large delete, once for a transactional one.",
    "Subtrees of more than `n` nodes are deleted through the strategy's resumable protocol \
     (`0`: always), capped at what one transaction holds.",
    "Sends the delete."
);

#[doc = include_str!("docs/descendants.md")]
#[must_use = "descendants are read only when awaited or streamed"]
pub struct Descendants<'a, E: Entity, S: Strategy<E>> {
    pub(crate) tree: Tree<'a, E, S>,
    pub(crate) from: S::From,
    /// The relative depths to read, `(min, max)`; `None` for an empty range.
    pub(crate) depths: Option<(usize, Option<usize>)>,
    pub(crate) options: S::ReadOptions,
    running: Running<'a, Result<Vec<E>, Error>>,
}

impl<'a, E: Entity, S: Strategy<E>> Descendants<'a, E, S> {
    /// The proper descendants (relative depths `1..`) of the node `from` names.
    pub(crate) fn new(tree: &Tree<'a, E, S>, from: S::From) -> Self {
        Descendants {
            tree: tree.clone(),
            from,
            depths: Some((1, None)),
            options: S::ReadOptions::default(),
            running: Running::default(),
        }
    }

    /// Only nodes whose depth relative to the node is in `range` (0 is the node itself):
    /// `1..=1` are the children, `1..=2` children and grandchildren, `2..` everything from the
    /// grandchildren down, `0..` the whole subtree with its root.
    pub fn depth(mut self, range: impl RangeBounds<usize>) -> Self {
        let min = match range.start_bound() {
            Bound::Included(&n) => n,
            Bound::Excluded(&n) => n.saturating_add(1),
            Bound::Unbounded => 0,
        };
        let max = match range.end_bound() {
            Bound::Included(&n) => Some(n),
            Bound::Excluded(&0) => {
                self.depths = None;
                return self;
            }
            Bound::Excluded(&n) => Some(n - 1),
            Bound::Unbounded => None,
        };
        self.depths = (max.is_none_or(|max| min <= max)).then_some((min, max));
        self
    }

    /// The nodes of the range, as they are read.
    pub fn stream(self) -> BoxStream<'a, Result<E, Error>> {
        S::stream(self)
    }

    /// Every node of the range.
    pub fn all(self) -> BoxFuture<'a, Result<Vec<E>, Error>> {
        S::all(self)
    }

    /// The number of nodes of the range.
    pub fn count(self) -> BoxFuture<'a, Result<usize, Error>> {
        S::count(self)
    }
}

impl<'a, E: Entity, S: Strategy<E>> Startable<'a> for Descendants<'a, E, S> {
    type Raw = Result<Vec<E>, Error>;
    fn running(&mut self) -> &mut Running<'a, Self::Raw> {
        &mut self.running
    }
    fn take_settings(&mut self) -> Self {
        let (tree, from, depths) = (self.tree.clone(), self.from.clone(), self.depths);
        let (options, running) = (self.options.clone(), Running::default());
        Descendants { tree, from, depths, options, running }
    }
    fn start(self) -> BoxFuture<'a, Self::Raw> {
        S::all(self)
    }
}

builder_future!(['a, E: Entity, S: Strategy<E>] Descendants<'a, E, S> => Result<Vec<E>, Error>, |r| r);
