//! Reading one side of a node's edges in exact pages, and merges of two sorted edge lists:
//! mutual edges of a node, common targets and common sources of two nodes. One pass over
//! both lists, no request per item.
//!
//! A node's edges are stored sorted by the other endpoint's escaped key text (the sort key
//! ends with it), so both lists come sorted by the node the merge matches on. Each side is
//! read in pages that end without an empty request, and the merge stops reading as soon as
//! one side is exhausted: at most `ceil(n / page) + ceil(m / page)` requests for lists of
//! `n` and `m` edges (one per empty list).

use std::collections::VecDeque;
use std::marker::PhantomData;

use futures_util::stream::{self, BoxStream, StreamExt, TryStreamExt};

use super::keys::escaped;
use super::{Edge, Edges, Incoming, InverseSpec, arg_text, node_text, parse_node};
use crate::error::Error;
use crate::key::{KeyArg, KeyPart};
use crate::ops::{Gate, Running};

/// Which two lists a [`Merge`] matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MergeKind {
    /// `a -> x` and `x -> a`: the nodes linked with `a` both ways.
    Mutual,
    /// `a -> x` and `b -> x`: the targets `a` and `b` share.
    CommonTargets,
    /// `x -> a` and `x -> b`: the sources `a` and `b` share.
    CommonSources,
}

/// The matched edges of two nodes' sorted edge lists, made by [`Edges::mutual`],
/// [`Edges::common_targets`] and [`Edges::common_sources`]. `N` is the type of the matched
/// nodes. Run it with [`all`](Merge::all) (or `.await`), [`ids`](Merge::ids) or
/// [`stream`](Merge::stream).
#[must_use = "a merge does nothing until it is run"]
pub struct Merge<'a, E: Edge, N> {
    edges: Edges<'a, E>,
    kind: MergeKind,
    a: String,
    b: String,
    page_size: u32,
    consistent: bool,
    _node: PhantomData<fn() -> N>,
    running: Running<'a, Result<Vec<(E, E)>, Error>>,
}

/// Items per request when no page size is given.
pub(crate) const DEFAULT_PAGE: u32 = 100;

impl<'a, E: Edge> Edges<'a, E> {
    /// The nodes `node` links to that link back to it, as pairs `(node -> x, x -> node)`
    /// sorted by `x`: a merge of its outgoing and incoming edges (example in the
    /// [module documentation](crate::edge)).
    pub fn mutual(&self, node: impl KeyArg<E::From>) -> Merge<'a, E, E::To>
    where
        E: Incoming,
    {
        let text = arg_text(&node);
        self.merge(MergeKind::Mutual, text.clone(), text)
    }

    /// The targets both `a` and `b` link to, as pairs `(a -> x, b -> x)` sorted by `x`
    /// ("mutual friends", "followed by both").
    pub fn common_targets(
        &self,
        a: impl KeyArg<E::From>,
        b: impl KeyArg<E::From>,
    ) -> Merge<'a, E, E::To> {
        self.merge(MergeKind::CommonTargets, arg_text(&a), arg_text(&b))
    }

    /// The sources that link to both `a` and `b`, as pairs `(x -> a, x -> b)` sorted by `x`
    /// ("users who liked both").
    pub fn common_sources(
        &self,
        a: impl KeyArg<E::To>,
        b: impl KeyArg<E::To>,
    ) -> Merge<'a, E, E::From>
    where
        E: Incoming,
    {
        self.merge(MergeKind::CommonSources, arg_text(&a), arg_text(&b))
    }

    fn merge<N>(&self, kind: MergeKind, a: String, b: String) -> Merge<'a, E, N> {
        Merge {
            edges: *self,
            kind,
            a,
            b,
            page_size: DEFAULT_PAGE,
            consistent: false,
            _node: PhantomData,
            running: Running::default(),
        }
    }
}

impl<'a, E: Edge> Edges<'a, E> {
    /// The edges of `node` in one direction (`outgoing`, else incoming), at most `limit`, in
    /// exact pages of `page` items through `gate`. `consistent` reads the table strongly
    /// consistent; reads through an index stay eventually consistent.
    pub(crate) fn side(
        &self,
        node: &str,
        outgoing: bool,
        limit: Option<usize>,
        (page, consistent): (u32, bool),
        gate: Option<Gate>,
    ) -> BoxStream<'a, Result<Vec<E>, Error>> {
        if outgoing {
            let query = self.outgoing_text(node).consistent_if(consistent);
            let query = match limit {
                Some(n) => query.limit(n),
                None => query,
            };
            return query.exact_pages(page, gate);
        }
        let on_table = !matches!(E::SPEC.inverse, InverseSpec::Index { .. });
        let query = self.incoming_text(node).consistent_if(consistent && on_table);
        let query = match limit {
            Some(n) => query.limit(n),
            None => query,
        };
        query.exact_pages(page, gate)
    }
}

/// The key text of the endpoint of `edge` at the far end of a read of its node's edges in one
/// direction (`outgoing`: the target).
pub(super) fn far_end<E: Edge>(edge: &E, outgoing: bool) -> String {
    if outgoing { node_text(edge.target()) } else { node_text(edge.source()) }
}

impl<'a, E: Edge, N: KeyPart> Merge<'a, E, N> {
    /// Items per request on each side (default 100).
    pub fn page_size(mut self, n: u32) -> Self {
        self.page_size = n.max(1);
        self
    }

    /// Strongly consistent reads (of the table; incoming edges read through an index stay
    /// eventually consistent).
    pub fn consistent(mut self) -> Self {
        self.consistent = true;
        self
    }

    /// The matched pairs as a stream, reading pages of both sides as the merge needs them.
    pub fn stream(self) -> BoxStream<'a, Result<(E, E), Error>> {
        let (left_out, right_out) = match self.kind {
            MergeKind::Mutual => (true, false),
            MergeKind::CommonTargets => (true, true),
            MergeKind::CommonSources => (false, false),
        };
        // Each side's edges with the escaped key text of their other endpoint.
        let side = |node: &str, outgoing: bool| {
            let how = (self.page_size, self.consistent);
            self.edges.side(node, outgoing, None, how, None).map_ok(move |edges| {
                edges.into_iter().map(|e| (escaped(&far_end(&e, outgoing)), e)).collect()
            })
        };
        let (left, right) = (side(&self.a, left_out).boxed(), side(&self.b, right_out).boxed());
        struct Side<'a, E> {
            pages: BoxStream<'a, Result<Vec<(String, E)>, Error>>,
            buffer: VecDeque<(String, E)>,
            done: bool,
        }
        let side = |pages| Side { pages, buffer: VecDeque::new(), done: false };
        stream::try_unfold([side(left), side(right)], |mut sides| async move {
            loop {
                for side in &mut sides {
                    if side.buffer.is_empty() && !side.done {
                        match side.pages.try_next().await? {
                            Some(page) => side.buffer.extend(page),
                            None => side.done = true,
                        }
                    }
                }
                // A side that is exhausted ends the merge: nothing more can match.
                let [left, right] = &mut sides;
                let (Some((lk, _)), Some((rk, _))) = (left.buffer.front(), right.buffer.front())
                else {
                    if (left.buffer.is_empty() && left.done)
                        || (right.buffer.is_empty() && right.done)
                    {
                        return Ok(None);
                    }
                    continue;
                };
                match lk.cmp(rk) {
                    std::cmp::Ordering::Less => {
                        left.buffer.pop_front();
                    }
                    std::cmp::Ordering::Greater => {
                        right.buffer.pop_front();
                    }
                    std::cmp::Ordering::Equal => {
                        if let (Some((_, l)), Some((_, r))) =
                            (left.buffer.pop_front(), right.buffer.pop_front())
                        {
                            return Ok(Some(((l, r), sides)));
                        }
                    }
                }
            }
        })
        .boxed()
    }

    /// Every matched pair, sorted by the matched node.
    pub async fn all(self) -> Result<Vec<(E, E)>, Error> {
        self.stream().try_collect().await
    }

    /// The matched nodes, sorted.
    pub async fn ids(self) -> Result<Vec<N>, Error> {
        let kind = self.kind;
        let pairs = self.all().await?;
        pairs
            .iter()
            .map(|(left, right)| {
                let (attr, text) = match kind {
                    MergeKind::Mutual | MergeKind::CommonTargets => {
                        (E::SPEC.attrs.1, node_text(left.target()))
                    }
                    MergeKind::CommonSources => (E::SPEC.attrs.0, node_text(right.source())),
                };
                parse_node::<E, N>(attr, &text)
            })
            .collect()
    }
}

edge_future!(['a, E: Edge, N: KeyPart + 'a] Merge<'a, E, N> => Result<Vec<(E, E)>, Error>, all,
    take(a, b), copy(edges, kind, page_size, consistent, _node));
