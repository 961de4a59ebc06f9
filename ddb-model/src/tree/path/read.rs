//! [`Descendants`]: the nodes below a node, optionally within a range of relative depths.

use futures_util::TryFutureExt;
use futures_util::stream::{self, BoxStream, StreamExt, TryStreamExt};

use super::PathTree;
use crate::error::Error;
use crate::ops::BoxFuture;
use crate::tree::builders::Descendants;
use crate::tree::handle::Path;
use crate::tree::{Hierarchy, TreePath, level_key};

/// How many level queries run at once.
const LEVEL_CONCURRENCY: usize = 8;

/// The query of one level.
type Level<'a, E> = crate::ops::EntityQuery<'a, E, crate::ops::OnIndex>;

fn level_all<E: Hierarchy>(q: Level<'_, E>) -> BoxFuture<'_, Result<Vec<E>, Error>> {
    Box::pin(q.all())
}

fn level_count<E: Hierarchy>(q: Level<'_, E>) -> BoxFuture<'_, Result<usize, Error>> {
    Box::pin(q.count())
}

/// What a [`Descendants`] read sends.
enum Plan {
    /// Nothing can match.
    Empty,
    /// Only the node itself (depth 0; no deeper level can exist).
    Itself,
    /// The node itself (when `itself`), then the subtree query, leaving out the nodes less
    /// than `min` levels below (`min >= 1`).
    Subtree { itself: bool, min: usize },
    /// The node itself (when `itself`), then one index query per absolute depth.
    Levels { itself: bool, depths: std::ops::RangeInclusive<usize> },
}

// The read of a subtree answers "what is below a node"; the handle only names the tree.
impl<'a, E: Hierarchy> PathTree<'a, E> {
    /// The nodes below `path`, optionally within a range of relative depths; see
    /// [`Descendants`].
    pub fn descendants(&self, path: &TreePath) -> Descendants<'a, E, Path> {
        Descendants::new(self, path.clone())
    }
}

impl<'a, E: Hierarchy> Descendants<'a, E, Path> {
    /// The page size of each query.
    pub fn page_size(mut self, n: u32) -> Self {
        self.options = Some(n);
        self
    }

    fn plan(&self) -> Plan {
        let Some((min, max)) = self.depths else {
            return Plan::Empty;
        };
        let base = self.from.depth();
        let itself = min == 0;
        let lo = min.max(1);
        // No node is deeper than the tree's limit.
        let hi = max.unwrap_or(usize::MAX).min(E::TREE.max_depth.saturating_sub(base));
        if lo > hi {
            return if itself { Plan::Itself } else { Plan::Empty };
        }
        match max {
            None => Plan::Subtree { itself, min: lo },
            Some(_) => Plan::Levels { itself, depths: base + lo..=base + hi },
        }
    }

    fn level(&self, depth: usize) -> Level<'a, E> {
        let query = self.tree.index_query(level_key(depth, Some(&self.from), true));
        match self.options {
            Some(n) => query.page_size(n),
            None => query,
        }
    }

    /// The query of the whole subtree, in pages of the size asked for.
    fn subtree(&self) -> crate::ops::EntityQuery<'a, E, crate::ops::OnTable> {
        let query = self.tree.subtree_query(&self.from);
        match self.options {
            Some(n) => query.page_size(n),
            None => query,
        }
    }

    fn itself(&self) -> BoxFuture<'a, Result<Option<E>, Error>> {
        let get = self.tree.get(&self.from);
        Box::pin(get.send())
    }

    /// The nodes as a stream, in the order described above, page by page.
    pub(super) fn read_stream(self) -> BoxStream<'a, Result<E, Error>> {
        let (itself, rest): (bool, BoxStream<'a, Result<E, Error>>) = match self.plan() {
            Plan::Empty => return stream::empty().boxed(),
            Plan::Itself => (true, stream::empty().boxed()),
            Plan::Subtree { itself, min } => {
                let floor = self.from.depth() + min;
                let nodes = self
                    .subtree()
                    .stream()
                    .try_filter(move |n| std::future::ready(n.path().depth() >= floor));
                (itself, nodes.boxed())
            }
            Plan::Levels { itself, depths } => {
                let levels: Vec<_> = depths.map(|d| self.level(d)).collect();
                (itself, stream::iter(levels).flat_map(|q| q.stream()).boxed())
            }
        };
        if !itself {
            return rest;
        }
        let head =
            stream::once(self.itself()).map_ok(|node| stream::iter(node.map(Ok))).try_flatten();
        head.chain(rest).boxed()
    }

    /// Every node, in the order described above; level queries run concurrently. Each plan
    /// boxes only its own future (one holding every plan's would be moved whole).
    pub(super) fn read_all(self) -> BoxFuture<'a, Result<Vec<E>, Error>> {
        match self.plan() {
            Plan::Levels { itself, depths } => crate::ops::boxed(|| async move {
                let levels: Vec<_> = depths.map(|d| self.level(d)).collect();
                let head = async { if itself { self.itself().await } else { Ok(None) } };
                let rest = stream::iter(levels)
                    .map(level_all)
                    .buffered(LEVEL_CONCURRENCY)
                    .try_collect::<Vec<Vec<E>>>();
                let (head, rest) = futures_util::future::try_join(head, rest).await?;
                Ok(head.into_iter().chain(rest.into_iter().flatten()).collect())
            }),
            // The query's own `all` (what `stream` does, without boxing a stream); its prefix
            // (the path and a separator) holds exactly the nodes 1 level down or more.
            Plan::Subtree { itself: false, min: 1 } => crate::ops::boxed(|| self.subtree().all()),
            Plan::Subtree { itself: false, min } => {
                let floor = self.from.depth() + min;
                let keep = move |mut nodes: Vec<E>| {
                    nodes.retain(|n| n.path().depth() >= floor);
                    nodes
                };
                crate::ops::boxed(|| self.subtree().all().map_ok(keep))
            }
            _ => Box::pin(self.read_stream().try_collect()),
        }
    }

    /// The number of nodes: count queries (a whole subtree or one per level; a range with a
    /// lower bound above 1 and no upper bound reads the subtree).
    pub(super) async fn read_count(self) -> Result<usize, Error> {
        let (itself, rest) = match self.plan() {
            Plan::Empty => return Ok(0),
            Plan::Itself => (true, Box::pin(std::future::ready(Ok(0usize))) as BoxFuture<'a, _>),
            Plan::Subtree { itself, min: 1 } => {
                (itself, Box::pin(self.tree.subtree_query(&self.from).count()) as BoxFuture<'a, _>)
            }
            Plan::Subtree { itself, min } => {
                let floor = self.from.depth() + min;
                let nodes = self.tree.subtree_query(&self.from).stream();
                let count = nodes.try_fold(0usize, move |n, node| {
                    std::future::ready(Ok(n + usize::from(node.path().depth() >= floor)))
                });
                (itself, Box::pin(count) as BoxFuture<'a, _>)
            }
            Plan::Levels { itself, depths } => {
                let levels: Vec<_> = depths.map(|d| self.level(d)).collect();
                let count = stream::iter(levels)
                    .map(level_count)
                    .buffered(LEVEL_CONCURRENCY)
                    .try_fold(0usize, |n, c| std::future::ready(Ok(n + c)));
                (itself, Box::pin(count) as BoxFuture<'a, _>)
            }
        };
        let head = async {
            if itself { self.itself().await.map(|n| usize::from(n.is_some())) } else { Ok(0) }
        };
        let (head, rest) = futures_util::future::try_join(head, rest).await?;
        Ok(head + rest)
    }
}
