//! [`PathDescendants`]: the nodes below a node, optionally within a range of relative depths.

use std::future::IntoFuture;
use std::ops::{Bound, RangeBounds};

use futures_util::stream::{self, BoxStream, StreamExt, TryStreamExt};

use super::PathTree;
use crate::error::Error;
use crate::ops::BoxFuture;
use crate::tree::{Hierarchy, TreePath, level_key};

/// How many level queries run at once.
const LEVEL_CONCURRENCY: usize = 8;

/// The nodes below a node; made by [`PathTree::descendants`].
///
/// Relative depth 0 is the node itself, 1 its children, 2 their children, ... Without
/// [`depth`](PathDescendants::depth) the result is every proper descendant (depths `1..`): one
/// table query, in key order. With a bounded range (`1..=2`), it is one index query per
/// level, each reading exactly the nodes of its level, returned level by level; depth 0 adds
/// a get of the node itself. A range with a lower bound above 1 and no upper bound reads the
/// whole subtree and leaves out the shallower nodes.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), ddb_model::Error> {
/// # use ddb_model::{Entity, TreePath, local};
/// # use serde::{Deserialize, Serialize};
/// # #[derive(Entity, Serialize, Deserialize, Debug, Clone)]
/// # #[entity(pk = "DRIVE#<drive>", sk = "NODE#<path>")]
/// # #[hierarchy(path = path, index = gsi1)]
/// # struct Folder { drive: String, path: TreePath }
/// let db = local::isolated_db().await?;
/// let tree = Folder::tree(&db, "D");
/// for path in ["D", "D/III", "D/III/a", "D/V", "D/V/d", "D/V/d/i"] {
///     tree.insert(&Folder { drive: "D".into(), path: path.parse()? }).await?;
/// }
/// let d: TreePath = "D".parse()?;
/// // Two levels below D: one query per level.
/// let two: Vec<Folder> = tree.descendants(&d).depth(1..=2).all().await?;
/// let paths: Vec<String> = two.iter().map(|f| f.path.to_string()).collect();
/// assert_eq!(paths, ["D/III", "D/V", "D/III/a", "D/V/d"]);
/// assert_eq!(tree.descendants(&d).count().await?, 5);
/// # Ok(()) }
/// ```
#[must_use = "descendants are read only when awaited or streamed"]
pub struct PathDescendants<'a, E: Hierarchy> {
    tree: PathTree<'a, E>,
    path: TreePath,
    min: usize,
    max: Option<usize>,
    /// An empty range (`..0`).
    empty: bool,
    page_size: Option<u32>,
}

/// The query of one level.
type Level<'a, E> = crate::ops::EntityQuery<'a, E, crate::ops::OnIndex>;

fn level_all<E: Hierarchy>(q: Level<'_, E>) -> BoxFuture<'_, Result<Vec<E>, Error>> {
    Box::pin(q.all())
}

fn level_count<E: Hierarchy>(q: Level<'_, E>) -> BoxFuture<'_, Result<usize, Error>> {
    Box::pin(q.count())
}

/// What a [`PathDescendants`] read sends.
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
    /// [`PathDescendants`].
    pub fn descendants(&self, path: &TreePath) -> PathDescendants<'a, E> {
        PathDescendants::new(self.clone(), path.clone())
    }
}

impl<'a, E: Hierarchy> PathDescendants<'a, E> {
    pub(crate) fn new(tree: PathTree<'a, E>, path: TreePath) -> Self {
        PathDescendants { tree, path, min: 1, max: None, empty: false, page_size: None }
    }

    /// Only nodes whose depth relative to the node is in `range` (0 is the node itself):
    /// `1..=1` are the children, `1..=2` children and grandchildren, `2..` everything from the
    /// grandchildren down, `0..` the whole subtree with its root.
    pub fn depth(mut self, range: impl RangeBounds<usize>) -> Self {
        self.min = match range.start_bound() {
            Bound::Included(&n) => n,
            Bound::Excluded(&n) => n.saturating_add(1),
            Bound::Unbounded => 0,
        };
        (self.max, self.empty) = match range.end_bound() {
            Bound::Included(&n) => (Some(n), false),
            Bound::Excluded(&0) => (Some(0), true),
            Bound::Excluded(&n) => (Some(n - 1), false),
            Bound::Unbounded => (None, false),
        };
        self
    }

    /// The page size of each query.
    pub fn page_size(mut self, n: u32) -> Self {
        self.page_size = Some(n);
        self
    }

    fn plan(&self) -> Plan {
        if self.empty || self.max.is_some_and(|m| self.min > m) {
            return Plan::Empty;
        }
        let base = self.path.depth();
        let itself = self.min == 0;
        let lo = self.min.max(1);
        // No node is deeper than the tree's limit.
        let hi = self.max.unwrap_or(usize::MAX).min(E::TREE.max_depth.saturating_sub(base));
        if lo > hi {
            return if itself { Plan::Itself } else { Plan::Empty };
        }
        match self.max {
            None => Plan::Subtree { itself, min: lo },
            Some(_) => Plan::Levels { itself, depths: base + lo..=base + hi },
        }
    }

    fn level(&self, depth: usize) -> Level<'a, E> {
        let query = self.tree.index_query(level_key(depth, Some(&self.path), true));
        match self.page_size {
            Some(n) => query.page_size(n),
            None => query,
        }
    }

    /// The query of the whole subtree, in pages of the size asked for.
    fn subtree(&self) -> crate::ops::EntityQuery<'a, E, crate::ops::OnTable> {
        let query = self.tree.subtree_query(&self.path);
        match self.page_size {
            Some(n) => query.page_size(n),
            None => query,
        }
    }

    fn itself(&self) -> BoxFuture<'a, Result<Option<E>, Error>> {
        let get = self.tree.get(&self.path);
        Box::pin(get.send())
    }

    /// The nodes as a stream, in the order described above, page by page.
    pub fn stream(self) -> BoxStream<'a, Result<E, Error>> {
        let (itself, rest): (bool, BoxStream<'a, Result<E, Error>>) = match self.plan() {
            Plan::Empty => return stream::empty().boxed(),
            Plan::Itself => (true, stream::empty().boxed()),
            Plan::Subtree { itself, min } => {
                let floor = self.path.depth() + min;
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

    /// Every node, in the order described above; level queries run concurrently.
    pub async fn all(self) -> Result<Vec<E>, Error> {
        match self.plan() {
            Plan::Levels { itself, depths } => {
                let levels: Vec<_> = depths.map(|d| self.level(d)).collect();
                let head = async { if itself { self.itself().await } else { Ok(None) } };
                let rest = stream::iter(levels)
                    .map(level_all)
                    .buffered(LEVEL_CONCURRENCY)
                    .try_collect::<Vec<Vec<E>>>();
                let (head, rest) = futures_util::future::try_join(head, rest).await?;
                Ok(head.into_iter().chain(rest.into_iter().flatten()).collect())
            }
            // The query's own `all` (what `stream` does, without boxing a stream).
            Plan::Subtree { itself: false, min } => {
                let floor = self.path.depth() + min;
                let mut nodes = self.subtree().all().await?;
                nodes.retain(|n| n.path().depth() >= floor);
                Ok(nodes)
            }
            _ => self.stream().try_collect().await,
        }
    }

    /// The number of nodes: count queries (a whole subtree or one per level; a range with a
    /// lower bound above 1 and no upper bound reads the subtree).
    pub async fn count(self) -> Result<usize, Error> {
        let (itself, rest) = match self.plan() {
            Plan::Empty => return Ok(0),
            Plan::Itself => (true, Box::pin(std::future::ready(Ok(0usize))) as BoxFuture<'a, _>),
            Plan::Subtree { itself, min: 1 } => {
                (itself, Box::pin(self.tree.subtree_query(&self.path).count()) as BoxFuture<'a, _>)
            }
            Plan::Subtree { itself, min } => {
                let floor = self.path.depth() + min;
                let nodes = self.tree.subtree_query(&self.path).stream();
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

impl<'a, E: Hierarchy> IntoFuture for PathDescendants<'a, E> {
    type Output = Result<Vec<E>, Error>;
    type IntoFuture = BoxFuture<'a, Self::Output>;
    fn into_future(self) -> Self::IntoFuture {
        Box::pin(self.all())
    }
}
