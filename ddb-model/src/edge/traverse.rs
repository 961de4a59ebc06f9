//! Graph traversals: the neighbourhood of a node within N hops, a shortest path
//! (bidirectional breadth-first search) and "also linked" recommendations.
//!
//! Every traversal expands many nodes at once, up to a concurrency bound, reads each node's
//! edges in pages that end without an empty request, and counts its requests against a
//! budget: the request that would exceed it is not sent, and the traversal fails with
//! [`Error::BudgetExhausted`]. Nodes are compared by their key text.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use futures_util::stream::{self, StreamExt, TryStreamExt};

use super::keys::escaped;
use super::merge::DEFAULT_PAGE;
use super::merge::far_end;
use super::{Edge, Edges, Incoming, InverseSpec, arg_text, parse_node};
use crate::error::Error;
use crate::key::KeyArg;
use crate::ops::Gate;
use crate::ops::Running;

/// Which edges a traversal follows from a node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Direction {
    /// The edges that start at the node (to their targets).
    #[default]
    Outgoing,
    /// The edges that end at the node (to their sources).
    Incoming,
    /// Both, ignoring the direction of edges.
    Both,
}

impl Direction {
    fn reversed(self) -> Direction {
        match self {
            Direction::Outgoing => Direction::Incoming,
            Direction::Incoming => Direction::Outgoing,
            Direction::Both => Direction::Both,
        }
    }
}

/// Requests a traversal may still send.
struct Budget {
    operation: &'static str,
    limit: Option<u64>,
    used: AtomicU64,
}

impl Budget {
    fn new(operation: &'static str, limit: Option<u64>) -> Arc<Budget> {
        Arc::new(Budget { operation, limit, used: AtomicU64::new(0) })
    }

    fn gate(self: &Arc<Self>) -> Gate {
        let budget = Arc::clone(self);
        Arc::new(move || {
            let used = budget.used.fetch_add(1, Ordering::SeqCst);
            match budget.limit {
                Some(limit) if used >= limit => {
                    budget.used.fetch_sub(1, Ordering::SeqCst);
                    Err(Error::BudgetExhausted { operation: budget.operation, budget: limit })
                }
                _ => Ok(()),
            }
        })
    }

    fn used(&self) -> u64 {
        self.used.load(Ordering::SeqCst)
    }
}

/// What the ranking traversals return: targets with their counts.
type Ranked<E> = Result<Vec<(<E as Edge>::To, usize)>, Error>;

/// How traversals read: shared by the builders.
#[derive(Debug, Clone, Copy)]
struct Reading {
    concurrency: usize,
    page_size: u32,
    budget: Option<u64>,
    consistent: bool,
}

impl Default for Reading {
    fn default() -> Self {
        Reading { concurrency: 8, page_size: DEFAULT_PAGE, budget: None, consistent: false }
    }
}

impl<'a, E: Edge> Edges<'a, E> {
    /// The key texts of the nodes linked with `node` in `direction` (at most `limit` per
    /// direction), each read in exact pages through `gate`.
    async fn neighbours(
        &self,
        node: &str,
        direction: Direction,
        limit: Option<usize>,
        reading: Reading,
        gate: &Gate,
    ) -> Result<Vec<String>, Error> {
        // A symmetric edge's incoming edges are its outgoing ones, mirrored: one read.
        let direction = match E::SPEC.inverse {
            InverseSpec::Symmetric => Direction::Outgoing,
            _ => direction,
        };
        let mut out = Vec::new();
        for (outgoing, this) in [(true, Direction::Outgoing), (false, Direction::Incoming)] {
            if direction != this && direction != Direction::Both {
                continue;
            }
            let how = (reading.page_size, reading.consistent);
            let mut pages = self.side(node, outgoing, limit, how, Some(Arc::clone(gate)));
            while let Some(page) = pages.try_next().await? {
                out.extend(page.iter().map(|e| far_end(e, outgoing)));
            }
        }
        Ok(out)
    }

    /// Expands every node of `frontier` (up to `reading.concurrency` at a time): each node
    /// with its neighbours, in frontier order.
    async fn expand(
        &self,
        frontier: &[String],
        direction: Direction,
        limit: Option<usize>,
        reading: Reading,
        gate: &Gate,
    ) -> Result<Vec<(String, Vec<String>)>, Error> {
        let edges = *self;
        stream::iter(frontier.iter().cloned())
            .map(|node| {
                let gate = Arc::clone(gate);
                async move {
                    let found = edges.neighbours(&node, direction, limit, reading, &gate).await?;
                    Ok::<_, Error>((node, found))
                }
            })
            .buffered(reading.concurrency.max(1))
            .try_collect()
            .await
    }

    /// The nodes within `hops` edges of `start` (not `start` itself), with their distance,
    /// found breadth-first: every node of one level is expanded before the next, up to 8 at
    /// a time ([`concurrency`](Neighbourhood::concurrency)). The graph's two endpoints must
    /// have the same type. Example on [`get`](Edges::get).
    pub fn neighbourhood(&self, start: impl KeyArg<E::From>, hops: u32) -> Neighbourhood<'a, E>
    where
        E: Edge<To = <E as Edge>::From>,
    {
        Neighbourhood {
            edges: *self,
            start: arg_text(&start),
            hops,
            direction: Direction::Outgoing,
            fan_out: None,
            reading: Reading::default(),
            running: Running::default(),
        }
    }

    /// A shortest path from `from` to `to` following edges forward (or as
    /// [`direction`](ShortestPath::direction) says), found by a breadth-first search from
    /// both ends that always expands the smaller frontier; `None` when there is none within
    /// [`max_depth`](ShortestPath::max_depth) edges (default 6).
    ///
    /// ```
    /// # use ddb_model::prelude::*;
    /// # use ddb_model::Edge;
    /// # use serde::{Deserialize, Serialize};
    /// #[derive(Entity, Edge, Serialize, Deserialize)]
    /// #[entity(pk = "USER#<a>", sk = "FOLLOWS#<b>")]
    /// #[edge(from = a, to = b, inverse(pk = "USER#<b>", sk = "FOLLOWER#<a>"))]
    /// struct Follow { a: String, b: String }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Error> {
    /// let db: Db = ddb_model::local::isolated_db().await?;
    /// let follows = Follow::edges(&db);
    /// for (a, b) in [("ann", "bob"), ("bob", "cy"), ("cy", "dee"), ("ann", "eve"), ("eve", "dee")] {
    ///     follows.link(&Follow { a: a.into(), b: b.into() }).await?;
    /// }
    /// let path = follows.shortest_path("ann", "dee").await?;
    /// assert_eq!(path, Some(vec!["ann".to_string(), "eve".into(), "dee".into()]));
    /// assert_eq!(follows.shortest_path("dee", "ann").await?, None); // edges are one-way
    /// # Ok(()) }
    /// ```
    pub fn shortest_path(
        &self,
        from: impl KeyArg<E::From>,
        to: impl KeyArg<E::From>,
    ) -> ShortestPath<'a, E>
    where
        E: Edge<To = <E as Edge>::From> + Incoming,
    {
        ShortestPath {
            edges: *self,
            from: arg_text(&from),
            to: arg_text(&to),
            direction: Direction::Outgoing,
            max_depth: 6,
            reading: Reading::default(),
            running: Running::default(),
        }
    }

    /// "Sources that link to `target` also link to ...": the other targets of up to
    /// [`fan_out`](Ranking::fan_out) sources of `target` (each read up to `fan_out`
    /// edges), ranked by how many of those sources link to them. At most `1 + fan_out`
    /// requests with pages of at least `fan_out` items.
    ///
    /// ```
    /// # use ddb_model::prelude::*;
    /// # use ddb_model::Edge;
    /// # use serde::{Deserialize, Serialize};
    /// #[derive(Entity, Edge, Serialize, Deserialize)]
    /// #[entity(pk = "USER#<user>", sk = "LIKES#<product>")]
    /// #[edge(from = user, to = product, inverse(pk = "PRODUCT#<product>", sk = "LIKED_BY#<user>"))]
    /// struct Like { user: String, product: String }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Error> {
    /// let db: Db = ddb_model::local::isolated_db().await?;
    /// let likes = Like::edges(&db);
    /// for (user, product) in [("bob", "tea"), ("bob", "cups"), ("cy", "tea"), ("cy", "cups"),
    ///     ("cy", "honey"), ("ann", "rum"), ("dan", "rum"), ("dan", "honey"), ("eve", "rum"),
    ///     ("eve", "honey"), ("eve", "cups"), ("fay", "gin")] {
    ///     likes.link(&Like { user: user.into(), product: product.into() }).await?;
    /// }
    /// // Those who like tea (bob, cy) like cups twice, honey once.
    /// let also = likes.also_linked("tea").top(2).await?;
    /// assert_eq!(also, [("cups".to_string(), 2), ("honey".to_string(), 1)]);
    /// // Dan and Eve like rum too; both like honey, Eve also cups. Fay shares nothing with Ann.
    /// let for_ann = likes.recommend("ann").await?;
    /// assert_eq!(for_ann, [("honey".to_string(), 2), ("cups".to_string(), 1)]);
    /// # Ok(()) }
    /// ```
    #[doc(alias = "also_liked")]
    #[doc(alias = "recommendations")]
    pub fn also_linked(&self, target: impl KeyArg<E::To>) -> Ranking<'a, E>
    where
        E: Incoming,
    {
        self.ranking(arg_text(&target), false)
    }

    /// Collaborative filtering for `source` (product recommendations): the targets
    /// of `source` (up to [`fan_out`](Ranking::fan_out)), the other sources linking to them
    /// (up to `fan_out` in all), and their targets (up to `fan_out` each), ranked by how many
    /// of those sources link to each target that `source` does not link to yet. At most
    /// `2 + 2 * fan_out` requests with pages of at least `fan_out` items. Example on
    /// [`also_linked`](Edges::also_linked).
    #[doc(alias = "recommendations")]
    pub fn recommend(&self, source: impl KeyArg<E::From>) -> Ranking<'a, E>
    where
        E: Incoming,
    {
        self.ranking(arg_text(&source), true)
    }

    fn ranking(&self, node: String, recommend: bool) -> Ranking<'a, E> {
        let (fan_out, top, reading, running) = (50, 10, Reading::default(), Running::default());
        Ranking { edges: *self, node, recommend, fan_out, top, reading, running }
    }
}

/// Shared builder methods of the traversals.
macro_rules! reading_methods {
    () => {
        /// How many nodes are expanded at once (default 8).
        pub fn concurrency(mut self, n: usize) -> Self {
            self.reading.concurrency = n.max(1);
            self
        }

        /// Items per request (default 100).
        pub fn page_size(mut self, n: u32) -> Self {
            self.reading.page_size = n.max(1);
            self
        }

        /// The most requests the traversal may send (default: no limit). The request that
        /// would exceed it is not sent: the traversal fails with
        /// [`Error::BudgetExhausted`].
        pub fn budget(mut self, requests: u64) -> Self {
            self.reading.budget = Some(requests);
            self
        }

        /// Strongly consistent reads of the table (reads through an index stay eventually
        /// consistent).
        pub fn consistent(mut self) -> Self {
            self.reading.consistent = true;
            self
        }
    };
}

/// The nodes within N hops of a node, made by [`Edges::neighbourhood`]; `.await` it.
#[must_use = "a traversal does nothing until it is awaited"]
pub struct Neighbourhood<'a, E: Edge> {
    edges: Edges<'a, E>,
    start: String,
    hops: u32,
    direction: Direction,
    fan_out: Option<usize>,
    reading: Reading,
    running: Running<'a, Result<Reached<E::From>, Error>>,
}

/// What [`Neighbourhood`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reached<N> {
    /// Each node reached with its distance in edges, by distance then key text.
    pub nodes: Vec<(N, u32)>,
    /// The requests the traversal sent.
    pub requests: u64,
}

impl<'a, E: Edge<To = <E as Edge>::From>> Neighbourhood<'a, E> {
    reading_methods!();

    /// Which edges to follow (default [`Direction::Outgoing`]). Other directions read edges
    /// backwards: this does not compile for a one-directional edge (see [`Incoming`]).
    pub fn direction(mut self, direction: Direction) -> Self
    where
        E: Incoming,
    {
        self.direction = direction;
        self
    }

    /// Follows at most `n` edges of each node (per direction), the first in key order.
    pub fn fan_out(mut self, n: usize) -> Self {
        self.fan_out = Some(n);
        self
    }

    /// Runs the traversal.
    pub async fn send(self) -> Result<Reached<E::From>, Error> {
        let budget = Budget::new("neighbourhood", self.reading.budget);
        let gate = budget.gate();
        let mut depth_of: HashMap<String, u32> = HashMap::new();
        depth_of.insert(self.start.clone(), 0);
        let mut reached: Vec<(String, u32)> = Vec::new();
        let mut frontier = vec![self.start.clone()];
        for depth in 1..=self.hops {
            if frontier.is_empty() {
                break;
            }
            let expanded = self
                .edges
                .expand(&frontier, self.direction, self.fan_out, self.reading, &gate)
                .await?;
            let mut next = Vec::new();
            for (_, found) in expanded {
                for node in found {
                    if !depth_of.contains_key(&node) {
                        depth_of.insert(node.clone(), depth);
                        next.push(node);
                    }
                }
            }
            next.sort_by_cached_key(|n| escaped(n));
            reached.extend(next.iter().map(|n| (n.clone(), depth)));
            frontier = next;
        }
        let nodes = reached
            .into_iter()
            .map(|(text, depth)| Ok((parse_node::<E, E::From>(E::SPEC.attrs.1, &text)?, depth)))
            .collect::<Result<Vec<_>, Error>>()?;
        Ok(Reached { nodes, requests: budget.used() })
    }
}

edge_future!(['a, E: Edge<To = <E as Edge>::From>] Neighbourhood<'a, E> =>
    Result<Reached<E::From>, Error>, send, take(start), copy(edges, hops, direction, fan_out, reading));

/// A shortest path between two nodes, made by [`Edges::shortest_path`]; `.await` it.
#[must_use = "a traversal does nothing until it is awaited"]
pub struct ShortestPath<'a, E: Edge> {
    edges: Edges<'a, E>,
    from: String,
    to: String,
    direction: Direction,
    max_depth: u32,
    reading: Reading,
    running: Running<'a, Result<Option<Vec<E::From>>, Error>>,
}

/// One side of a bidirectional search: each node seen with the node it was reached from
/// and its distance.
struct Side {
    seen: HashMap<String, (Option<String>, u32)>,
    frontier: Vec<String>,
    depth: u32,
}

impl Side {
    fn new(start: &str) -> Side {
        let mut seen = HashMap::new();
        seen.insert(start.to_owned(), (None, 0));
        Side { seen, frontier: vec![start.to_owned()], depth: 0 }
    }

    /// The nodes from `node` back to this side's start, `node` first.
    fn chain(&self, node: &str) -> Vec<String> {
        let mut out = vec![node.to_owned()];
        let mut at = node;
        while let Some((Some(prev), _)) = self.seen.get(at) {
            out.push(prev.clone());
            at = prev;
            if out.len() > self.seen.len() {
                break;
            }
        }
        out
    }
}

impl<'a, E: Edge<To = <E as Edge>::From>> ShortestPath<'a, E> {
    reading_methods!();

    /// Which edges a path may use (default [`Direction::Outgoing`]: a path follows edges
    /// forward; [`Direction::Both`] ignores their direction).
    pub fn direction(mut self, direction: Direction) -> Self {
        self.direction = direction;
        self
    }

    /// The longest path looked for, in edges (default 6).
    pub fn max_depth(mut self, edges: u32) -> Self {
        self.max_depth = edges;
        self
    }

    /// Runs the search: the nodes of a shortest path, `from` first and `to` last.
    pub async fn send(self) -> Result<Option<Vec<E::From>>, Error> {
        let path = self.search().await?;
        path.map(|nodes| {
            nodes
                .iter()
                .map(|text| parse_node::<E, E::From>(E::SPEC.attrs.0, text))
                .collect::<Result<Vec<_>, Error>>()
        })
        .transpose()
    }

    async fn search(&self) -> Result<Option<Vec<String>>, Error> {
        if self.from == self.to {
            return Ok(Some(vec![self.from.clone()]));
        }
        let budget = Budget::new("shortest path", self.reading.budget);
        let gate = budget.gate();
        // sides[0] searches forward from `from`, sides[1] backward from `to`.
        let mut sides = [Side::new(&self.from), Side::new(&self.to)];
        let directions = [self.direction, self.direction.reversed()];
        while sides[0].depth + sides[1].depth < self.max_depth {
            if sides.iter().any(|s| s.frontier.is_empty()) {
                return Ok(None);
            }
            let i = usize::from(sides[1].frontier.len() < sides[0].frontier.len());
            let expanded = self
                .edges
                .expand(&sides[i].frontier, directions[i], None, self.reading, &gate)
                .await?;
            let [first, second] = &mut sides;
            let (this, other) = if i == 0 { (first, second) } else { (second, first) };
            this.depth += 1;
            let depth = this.depth;
            let mut next = Vec::new();
            let mut best: Option<(u32, String)> = None;
            for (node, found) in expanded {
                for neighbour in found {
                    if this.seen.contains_key(&neighbour) {
                        continue;
                    }
                    this.seen.insert(neighbour.clone(), (Some(node.clone()), depth));
                    if let Some((_, d)) = other.seen.get(&neighbour) {
                        let total = depth + d;
                        if best
                            .as_ref()
                            .is_none_or(|(b, n)| (total, escaped(&neighbour)) < (*b, escaped(n)))
                        {
                            best = Some((total, neighbour.clone()));
                        }
                    }
                    next.push(neighbour);
                }
            }
            if let Some((_, meet)) = best.filter(|(t, _)| *t <= self.max_depth) {
                let mut path = sides[0].chain(&meet);
                path.reverse();
                let back = sides[1].chain(&meet);
                path.extend(back.into_iter().skip(1));
                return Ok(Some(path));
            }
            next.sort_by_cached_key(|n| escaped(n));
            sides[i].frontier = next;
        }
        Ok(None)
    }
}

edge_future!(['a, E: Edge<To = <E as Edge>::From>] ShortestPath<'a, E> =>
    Result<Option<Vec<E::From>>, Error>, send, take(from, to), copy(edges, direction, max_depth, reading));

/// Targets ranked by how many like-minded sources link to them, made by
/// [`Edges::also_linked`] (the sources of a target) and [`Edges::recommend`] (the sources that
/// share a source's targets); `.await` it.
#[must_use = "a traversal does nothing until it is awaited"]
pub struct Ranking<'a, E: Edge> {
    edges: Edges<'a, E>,
    /// The target (`also_linked`) or the source (`recommend`).
    node: String,
    recommend: bool,
    fan_out: usize,
    top: usize,
    reading: Reading,
    running: Running<'a, Ranked<E>>,
}

impl<'a, E: Edge> Ranking<'a, E> {
    reading_methods!();

    /// How many nodes each step reads, and how many edges of each (default 50): the sources
    /// of the target and their targets (`also_linked`); the targets of the source, the other
    /// sources in all, and the targets of each (`recommend`).
    pub fn fan_out(mut self, n: usize) -> Self {
        self.fan_out = n.max(1);
        self
    }

    /// How many targets to return (default 10).
    pub fn top(mut self, n: usize) -> Self {
        self.top = n;
        self
    }

    /// Runs it: the best targets with their number of like-minded sources, best first (ties
    /// in key order).
    pub async fn send(self) -> Ranked<E> {
        let operation = if self.recommend { "recommend" } else { "also-linked" };
        let budget = Budget::new(operation, self.reading.budget);
        let gate = budget.gate();
        let mut reading = self.reading;
        reading.page_size = reading.page_size.max(u32::try_from(self.fan_out).unwrap_or(u32::MAX));
        let (edges, fan_out, node) = (self.edges, Some(self.fan_out), &self.node);
        // The sources whose targets count, and the targets that do not.
        let (sources, known) = if self.recommend {
            let mine = edges.neighbours(node, Direction::Outgoing, fan_out, reading, &gate).await?;
            // One more than the fan-out: the source itself is among them.
            let limit = Some(self.fan_out + 1);
            let sharing = edges.expand(&mine, Direction::Incoming, limit, reading, &gate).await?;
            let mut seen: HashSet<String> = HashSet::new();
            let others: Vec<String> = sharing
                .into_iter()
                .flat_map(|(_, sources)| sources)
                .filter(|s| s != node && seen.insert(s.clone()))
                .take(self.fan_out)
                .collect();
            (others, mine.into_iter().collect())
        } else {
            let sources =
                edges.neighbours(node, Direction::Incoming, fan_out, reading, &gate).await?;
            (sources, HashSet::from([node.clone()]))
        };
        let theirs = edges.expand(&sources, Direction::Outgoing, fan_out, reading, &gate).await?;
        let mut scores: HashMap<String, usize> = HashMap::new();
        for (_, targets) in theirs {
            let distinct: HashSet<String> = targets.into_iter().collect();
            for t in distinct.into_iter().filter(|t| !known.contains(t)) {
                *scores.entry(t).or_default() += 1;
            }
        }
        let mut ranked: Vec<(String, usize)> = scores.into_iter().collect();
        ranked.sort_by_cached_key(|(t, n)| (std::cmp::Reverse(*n), escaped(t)));
        ranked.truncate(self.top);
        ranked
            .into_iter()
            .map(|(t, n)| Ok((parse_node::<E, E::To>(E::SPEC.attrs.1, &t)?, n)))
            .collect()
    }
}

edge_future!(['a, E: Edge] Ranking<'a, E> => Ranked<E>, send, take(node),
    copy(edges, recommend, fan_out, top, reading));
