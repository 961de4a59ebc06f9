//! Bulk load (see [`BulkLoad`]): what every strategy shares (the checks of the input, the
//! order, the journal, the batches, the last transaction); each strategy's
//! `Strategy::load_plan` renders its rows and the bookkeeping of the existing parents.
//!
//! The protocol: 1. the intent record (kind [`OpKind::Load`], phase check), which refuses
//! every other write of the tree; 2. the checks against the tree; 3. the journal (the input
//! as node items, in items of at most ~300 KB next to the intent), then the intent's phase
//! (copy) and journal size; 4. the rows, `BatchWriteItem`s of 25; 5. one
//! `TransactWriteItems`: the parents' bookkeeping and the deletes of the journal and the
//! intent, fenced by the intent's token and epoch.
//!
//! Every row is a function of the journal and of the existing parents, which no write can
//! change while the intent is there: `resume` writes the same rows again, `rollback` deletes
//! them. Batch writes carry no condition, so a loader that recovery took over may still land
//! rows it had in flight (the same rows a `resume` writes); only its last transaction fails
//! ([`TreeProblem::Superseded`]). Call `rollback` only once the loading process is gone.

use std::collections::{HashMap, HashSet, VecDeque};
use std::mem::replace;

use aws_sdk_dynamodb::types::AttributeValue;

use super::conflict::Failed;
use super::handle::{Strategy, Tree};
use super::op::{OpKind, OpPhase, OpReport, Progress, ProgressFn, TreeOp};
use super::op::{corrupt_intent, intent_value, quiet};
use super::raw::{OP_PHASE, RawAction, delete_plain, fence_cond, guarded, key_of, s, superseded};
use super::{TreeProblem, pk_attr, problem};
use crate::error::{Error, IntentReason};
use crate::expr::ExprBuilder;
use crate::item::{Item, item_size};
use crate::key::{Escaped, KeyTemplate, part};
use crate::model::{Entity, Stamp, Table, from_item, string_attr, to_item_at};
use crate::ops::action::Action;
use crate::ops::put::next_version;
use crate::ops::retry::{self, REREAD_CONFLICTS, Try};
use crate::ops::{
    BoxFuture, MAX_BATCH_WRITES, MAX_TRANSACTION_ACTIONS, Running, Startable, builder_future,
};

/// The attribute of the intent record that counts the journal's items.
const OP_CHUNKS: &str = "chunks";
/// The attribute of a journal item that holds its nodes.
const JOURNAL_NODES: &str = "nodes";
/// The attribute of a journal item that names the load it belongs to.
const JOURNAL_TOKEN: &str = "token";
/// The bytes of node items one journal item holds at most (an item holds 400 KB).
const JOURNAL_BYTES: usize = 300_000;
/// Rows sent between two progress reports: 16 requests of 25.
const ROWS_PER_STEP: usize = MAX_BATCH_WRITES * 16;

/// A problem of a load's input, before the strategy words it.
#[doc(hidden)]
#[derive(Debug)]
pub enum LoadProblem {
    /// A node is twice in the input, or in the tree already (its address).
    Duplicate(String),
    /// A parent is neither in the input nor in the tree (its address).
    Missing(String),
    /// A node's parents in the input lead back to itself: (node, parent).
    Cycle(String, String),
}

/// The nodes of a load, checked and ordered parents first (breadth first from the nodes
/// whose parent is not in the input), with what each strategy needs to render them.
#[doc(hidden)]
pub struct Forest<N> {
    /// The nodes, parents first.
    pub nodes: Vec<N>,
    /// Their addresses (escaped id, or path text).
    pub addrs: Vec<String>,
    /// The position of each node's parent, when the parent is in the input.
    pub parent: Vec<Option<usize>>,
    /// The existing node each node's subtree hangs under (`None`: the top level).
    pub anchor: Vec<Option<String>>,
    /// Each node's depth below its anchor: 1 for the nodes whose parent is not in the input.
    pub depth: Vec<usize>,
    /// Each node's number of children in the input.
    pub kids: Vec<usize>,
    /// Each node's item as an insert writes it (at the next version), at the load's time,
    /// which keeps the times a node holds (an import) and sets the unset ones.
    pub items: Vec<Item>,
}

impl<N: Entity> Forest<N> {
    /// Checks and orders `input`: [`LoadProblem::Duplicate`], [`LoadProblem::Cycle`].
    fn new<S: Strategy<N>>(input: Vec<N>, stamp: Stamp) -> Result<Forest<N>, Error> {
        let n = input.len();
        let (addrs, parents): (Vec<String>, Vec<Option<String>>) =
            input.iter().map(S::load_addr).unzip();
        let mut at: HashMap<&str, usize> = HashMap::with_capacity(n);
        for (i, a) in addrs.iter().enumerate() {
            if at.insert(a.as_str(), i).is_some() {
                return Err(S::load_problem(LoadProblem::Duplicate(a.clone())));
            }
        }
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); n];
        let mut roots = Vec::new();
        let mut parent_at = vec![None; n];
        for (i, p) in parents.iter().enumerate() {
            match p.as_deref().and_then(|p| at.get(p)) {
                Some(&p) => {
                    children[p].push(i);
                    parent_at[i] = Some(p);
                }
                None => roots.push(i),
            }
        }
        let mut order = Vec::with_capacity(n);
        let mut depth = vec![0usize; n];
        let mut anchor: Vec<Option<String>> = vec![None; n];
        let mut queue: VecDeque<usize> = VecDeque::new();
        for &r in &roots {
            depth[r] = 1;
            anchor[r] = parents[r].clone();
            queue.push_back(r);
        }
        while let Some(i) = queue.pop_front() {
            order.push(i);
            for &c in &children[i] {
                depth[c] = depth[i] + 1;
                anchor[c] = anchor[i].clone();
                queue.push_back(c);
            }
        }
        if order.len() < n {
            // Nodes never reached from a node whose parent is outside the input: a cycle.
            if let Some(i) = (0..n).find(|&i| depth[i] == 0) {
                let parent = parents[i].clone().unwrap_or_default();
                return Err(S::load_problem(LoadProblem::Cycle(addrs[i].clone(), parent)));
            }
        }
        let mut new_pos = vec![0usize; n];
        for (pos, &i) in order.iter().enumerate() {
            new_pos[i] = pos;
        }
        let mut slots: Vec<Option<N>> = input.into_iter().map(Some).collect();
        let nodes: Vec<N> = order.iter().filter_map(|&i| slots[i].take()).collect();
        let item = |n: &N| to_item_at(n, next_version::<N>(n.version())?.1, stamp);
        Ok(Forest {
            items: nodes.iter().map(item).collect::<Result<_, Error>>()?,
            addrs: order.iter().map(|&i| addrs[i].clone()).collect(),
            parent: order.iter().map(|&i| parent_at[i].map(|p| new_pos[p])).collect(),
            anchor: order.iter().map(|&i| anchor[i].clone()).collect(),
            depth: order.iter().map(|&i| depth[i]).collect(),
            kids: order.iter().map(|&i| children[i].len()).collect(),
            nodes,
        })
    }

    /// The distinct existing nodes the load hangs under (`None`: the top level), in the
    /// order they are first met.
    pub fn anchors(&self) -> Vec<Option<String>> {
        let mut seen = HashSet::new();
        self.anchor.iter().filter(|a| seen.insert(a.as_deref())).cloned().collect()
    }

    /// The number of nodes whose parent is the existing node `anchor` (the top level for
    /// `None`).
    pub fn roots_under(&self, anchor: Option<&str>) -> usize {
        (0..self.nodes.len())
            .filter(|&i| self.parent[i].is_none() && self.anchor[i].as_deref() == anchor)
            .count()
    }

    /// The deepest node of the load and its depth, when its anchor is at `anchor_depth`
    /// (the top level: 0).
    pub fn deepest(&self, anchor_depth: impl Fn(Option<&str>) -> usize) -> Option<(usize, usize)> {
        (0..self.nodes.len())
            .map(|i| (i, anchor_depth(self.anchor[i].as_deref()) + self.depth[i]))
            .max_by_key(|(_, d)| *d)
    }
}

/// What a load writes: its rows (puts), and the updates of the existing parents that go in
/// its last transaction.
#[doc(hidden)]
pub struct LoadPlan {
    /// Every item the load puts, node items and their bookkeeping copies.
    pub(crate) rows: Vec<Item>,
    /// Updates of the existing nodes the load hangs under (counters, revisions, numbers).
    pub(crate) finals: Vec<RawAction>,
}

/// A bulk load of new nodes into a tree; made by `bulk_load` on every tree handle
/// ([`PathTree::bulk_load`](super::PathTree::bulk_load),
/// [`ClosureTree::bulk_load`](super::ClosureTree::bulk_load),
/// [`AdjacencyTree::bulk_load`](super::AdjacencyTree::bulk_load),
/// [`NestedTree::bulk_load`](super::NestedTree::bulk_load)) and by
/// [`TreeProtocol::bulk_load`](super::TreeProtocol::bulk_load). `.await` it (or call
/// [`send`](BulkLoad::send)).
///
/// **The input.** Any number of new nodes, in any order: each node's parent is either in
/// the input (before or after it) or a node of the tree already (so a forest can be hung
/// under existing nodes), or the node is a top-level node. Checked before any row is
/// written, each a typed error that leaves the tree as it was:
///
/// - a node of another tree ([`TreeProblem::OtherTree`]), an invalid path or a node deeper
///   than `max_depth` ([`TreeProblem::Path`], [`TreeProblem::TooDeep`]);
/// - a node twice in the input, or a node the tree has already ([`TreeProblem::Duplicate`],
///   [`Error::is_already_exists`]);
/// - a parent neither in the input nor in the tree ([`TreeProblem::ParentMissing`],
///   [`TreeProblem::NoParent`]); parents that lead back to the node ([`TreeProblem::Cycle`]);
/// - nested set: no room in an existing parent's free numbers ([`TreeProblem::NoRoom`]);
/// - more existing parents than the last transaction records
///   ([`TreeProblem::LoadTooWide`]: about 99, fewer for inputs of several MB);
/// - another large operation in progress ([`TreeProblem::Busy`]).
///
/// **The result** is the tree the same nodes would make inserted one by one, parents first:
/// every read of the strategy and every later insert, move and delete behaves the same (the
/// closure strategy writes each node's copies; the adjacency strategy its children
/// counters; the nested set numbers each loaded forest evenly inside a share of its
/// parent's free numbers, with gaps for later inserts). A versioned node is stored at
/// version + 1, as an insert stores it.
///
/// **Requests**: 1 `PutItem` (the intent), ⌈N / 100⌉ `BatchGetItem` (no node exists
/// already), the reads of the existing parents (path: 1 `BatchGetItem`; closure and nested
/// set: 1 `GetItem` each; adjacency: one `GetItem` per level above each; a nested-set load
/// of top-level nodes: 1 `GetItem` of the top-level record), 1 `BatchWriteItem` of the
/// journal per 25 items of 300 KB (one up to some 7.5 MB of input), 1 `UpdateItem`,
/// ⌈rows / 25⌉ `BatchWriteItem`, 1 `TransactWriteItems`. Rows: one per node (path, adjacency, nested set); D + 2 per node
/// at depth D (closure: the node, its own copy, a copy per ancestor and one under the tree).
///
/// **Concurrency and recovery**: while the load runs, every other write to the tree waits
/// ([`TreeProblem::Busy`]). An interrupted load (a crash after any request) is pending:
/// `resume` writes its rows again from the journal and finishes it, `rollback` deletes what
/// it wrote. Unprocessed batch items are sent again with exponential backoff; a chunk still
/// unprocessed after the batch writer's attempts fails the load with
/// [`Error::BatchWriteIncomplete`], and the load is pending (`resume` finishes it).
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), ddb_model::Error> {
/// use ddb_model::{Entity, TreePath, local};
/// use serde::{Deserialize, Serialize};
///
/// #[derive(Entity, Serialize, Deserialize, Debug, Clone)]
/// #[entity(pk = "DRIVE#<drive>", sk = "NODE#<path>")]
/// #[hierarchy(path = path, index = gsi1)]
/// struct Folder { drive: String, path: TreePath }
///
/// #[derive(Entity, Serialize, Deserialize, Debug, Clone)]
/// #[entity(pk = "ORG#<org>", sk = "EMP#<id>")]
/// #[hierarchy(strategy = closure, parent = manager)]
/// struct Employee { org: String, id: String, manager: Option<String> }
///
/// let db = local::isolated_db().await?;
/// let drive = Folder::tree(&db, "D");
/// let folder = |p: &str| Folder { drive: "D".into(), path: p.parse().unwrap() };
/// let mut nodes: Vec<Folder> = (0..60).map(|i| folder(&format!("docs/{i}"))).collect();
/// nodes.push(folder("docs"));
/// assert_eq!(drive.bulk_load(nodes).await?.nodes, 61);
/// assert_eq!(drive.children(&"docs".parse()?).all().await?.len(), 60);
/// // 3 BatchWriteItem for the 61 nodes, 1 for the journal.
/// assert_eq!(db.requests().get(ddb_model::Op::BatchWriteItem), 4);
///
/// let emp = |id: &str, manager: Option<&str>| Employee {
///     org: "acme".into(), id: id.into(), manager: manager.map(Into::into),
/// };
/// let org = Employee::tree(&db, "acme");
/// // Any order: a node may come before its parent.
/// let staff = (0..100).map(|i| emp(&format!("dev{i}"), Some("cto")));
/// let report = org.bulk_load(staff.chain([emp("ceo", None), emp("cto", Some("ceo"))])).await?;
/// assert_eq!(report.nodes, 102);
/// assert_eq!(org.descendants("ceo").count().await?, 101);
///
/// // Under an existing node; a node the tree has already is refused, and nothing written.
/// org.bulk_load([emp("intern", Some("dev7"))]).await?;
/// let err = org.bulk_load([emp("qa", Some("cto")), emp("dev1", Some("cto"))]).await.unwrap_err();
/// assert!(err.is_already_exists());
/// assert!(org.get("qa").await?.is_none());
/// # Ok(()) }
/// ```
#[must_use = "a bulk load does nothing until it is awaited"]
pub struct BulkLoad<'t, E: Entity, S: Strategy<E>> {
    tree: &'t Tree<'t, E, S>,
    nodes: Vec<E>,
    progress: ProgressFn<'t>,
    running: Running<'t, Result<OpReport, Error>>,
}

impl<'t, E: Entity, S: Strategy<E>> BulkLoad<'t, E, S> {
    pub(crate) fn new(tree: &'t Tree<'t, E, S>, nodes: impl IntoIterator<Item = E>) -> Self {
        let (progress, running) = (quiet(), Running::default());
        BulkLoad { tree, nodes: nodes.into_iter().collect(), progress, running }
    }

    /// Calls `f` after each step of 400 rows (16 requests) with the rows written so far
    /// ([`OpPhase::Copy`]; `total` is every row of the load, bookkeeping copies included).
    pub fn on_progress(mut self, f: impl FnMut(Progress) + Send + 't) -> Self {
        self.progress = Box::new(f);
        self
    }

    /// Sends the load; see [`BulkLoad`]. `nodes` of the report is the number of nodes
    /// loaded (`resumable: true`; an empty input writes nothing and reports
    /// `resumable: false`).
    pub async fn send(self) -> Result<OpReport, Error> {
        let BulkLoad { tree, nodes, mut progress, .. } = self;
        load(tree, nodes, &mut progress).await
    }
}

impl<'t, E: Entity, S: Strategy<E>> Startable<'t> for BulkLoad<'t, E, S> {
    type Raw = Result<OpReport, Error>;
    const DRY_SENDS_READS: bool = true;
    fn running(&mut self) -> &mut Running<'t, Self::Raw> {
        &mut self.running
    }
    fn take_settings(&mut self) -> Self {
        let (nodes, progress) =
            (std::mem::take(&mut self.nodes), replace(&mut self.progress, quiet()));
        BulkLoad { tree: self.tree, nodes, progress, running: Running::default() }
    }
    fn start(self) -> BoxFuture<'t, Self::Raw> {
        crate::ops::boxed(|| self.send())
    }
}

builder_future!(['a, E: Entity, S: Strategy<E>] BulkLoad<'a, E, S> => Result<OpReport, Error>, |r| r);

async fn load<E: Entity, S: Strategy<E>>(
    tree: &Tree<'_, E, S>,
    nodes: Vec<E>,
    progress: &mut ProgressFn<'_>,
) -> Result<OpReport, Error> {
    if nodes.is_empty() {
        return Ok(OpReport { nodes: 0, resumable: false });
    }
    for node in &nodes {
        tree.check_tree(node)?;
        S::load_check(node)?;
    }
    let count = nodes.len();
    let mut forest = Forest::new::<S>(nodes, tree.db.stamp(false))?;
    let op = TreeOp::start(OpKind::Load { nodes: count }, OpPhase::Check);
    let journal = journal::<E, S>(tree, &forest, &op.token)?;
    tree.begin(&op).await?;
    let checked = async {
        absent(tree, &forest).await?;
        let plan = S::load_plan(tree, &mut forest, &op.token).await?;
        let max = MAX_TRANSACTION_ACTIONS.saturating_sub(journal.len() + 1);
        if plan.finals.len() > max {
            return Err(problem::<E>(TreeProblem::LoadTooWide { parents: plan.finals.len(), max }));
        }
        Ok(plan)
    }
    .await;
    let plan = match checked {
        Ok(plan) => plan,
        Err(e) => {
            // Nothing was written but the intent: remove it (if that fails too, the load is
            // pending in its check phase, and `resume` or `rollback` removes it).
            let _ = tree.clear_intent(&op).await;
            return Err(e);
        }
    };
    let chunks = journal.len();
    write_rows::<E, S>(tree, journal, false, &mut |_| {}).await?;
    let chunks_text = chunks.to_string();
    let fields = [(OP_PHASE, OpPhase::Copy.as_str()), (OP_CHUNKS, chunks_text.as_str())];
    tree.set_fields(&op, &fields).await?;
    let op = TreeOp { phase: OpPhase::Copy, ..op };
    write_rows::<E, S>(tree, plan.rows, false, progress).await?;
    finish::<E, S>(tree, &op, plan.finals, chunks).await?;
    Ok(OpReport { nodes: count, resumable: true })
}

/// Checks that no node of the forest exists: strongly consistent `BatchGetItem`s.
async fn absent<E: Entity, S: Strategy<E>>(
    tree: &Tree<'_, E, S>,
    forest: &Forest<E>,
) -> Result<(), Error> {
    let keys = forest.nodes.iter().map(|n| n.key());
    let found = tree.db.batch_get(keys).consistent().send().await?;
    match found.iter().position(Option::is_some) {
        Some(i) => Err(S::load_problem(LoadProblem::Duplicate(forest.addrs[i].clone()))),
        None => Ok(()),
    }
}

/// The template of the journal's sort keys: the intent record's, `#load#` and the item's
/// number.
const JOURNAL: KeyTemplate =
    KeyTemplate::new("<op>#load#<n>", &[part(0), crate::key::lit("#load#"), part(1)]);

/// The sort key of journal item `i` of the tree whose intent record is at `op_sk`.
fn journal_sk(op_sk: &str, i: usize) -> String {
    JOURNAL.render(&[Escaped(op_sk), Escaped(&format!("{i:05}"))])
}

/// The journal of a load: its nodes as node items (at the version they were given), in
/// items of at most [`JOURNAL_BYTES`].
fn journal<E: Entity, S: Strategy<E>>(
    tree: &Tree<'_, E, S>,
    forest: &Forest<E>,
    token: &str,
) -> Result<Vec<Item>, Error> {
    let (pk, op_sk) = (tree.pk.as_str(), S::op_sk());
    let mut out = Vec::new();
    let mut chunk: Vec<AttributeValue> = Vec::new();
    let mut bytes = 0;
    let close = |chunk: Vec<AttributeValue>, out: &mut Vec<Item>| {
        let mut item = key_of::<E>(pk, &journal_sk(&op_sk, out.len()));
        let type_attr = crate::model::type_attr::<<E as Entity>::Table>();
        item.insert(type_attr.to_owned(), s(&format!("{}:tree-load", E::NAME)));
        item.insert(JOURNAL_TOKEN.to_owned(), s(token));
        item.insert(JOURNAL_NODES.to_owned(), AttributeValue::L(chunk));
        out.push(item);
    };
    // The nodes' times, journaled: a `resume` writes the times of the first attempt.
    let stamp = tree.db.stamp(false);
    for node in &forest.nodes {
        let item = to_item_at(node, node.version(), stamp)?;
        let size = item_size(&item) + 3;
        if !chunk.is_empty() && bytes + size > JOURNAL_BYTES {
            close(std::mem::take(&mut chunk), &mut out);
            bytes = 0;
        }
        bytes += size;
        chunk.push(AttributeValue::M(item));
    }
    if !chunk.is_empty() {
        close(chunk, &mut out);
    }
    Ok(out)
}

/// The journal items of the tree, strongly consistent, in order.
async fn journal_items<E: Entity, S: Strategy<E>>(
    tree: &Tree<'_, E, S>,
) -> Result<Vec<Item>, Error> {
    use crate::ops::{AsItem, KeyStart, OnTable, QueryFrom};
    let prefix = JOURNAL.prefix(&[Escaped(&S::op_sk())], 1);
    let start = KeyStart::new(None, tree.pk.as_str().to_owned(), &prefix);
    QueryFrom::<E, OnTable>::new(tree.db, start)
        .prefix()
        .consistent()
        .with_decode::<AsItem>()
        .all()
        .await
}

/// The nodes of `op`'s journal, in the order they were written; every one of its `chunks`
/// items must be there.
async fn read_journal<E: Entity, S: Strategy<E>>(
    tree: &Tree<'_, E, S>,
    op: &TreeOp,
    chunks: usize,
) -> Result<Vec<E>, Error> {
    let corrupt = corrupt_intent::<E>;
    let items: Vec<Item> = journal_items::<E, S>(tree)
        .await?
        .into_iter()
        .filter(|item| string_attr(item, JOURNAL_TOKEN) == Some(op.token.as_str()))
        .collect();
    if items.len() != chunks {
        let (found, expected) = (items.len(), chunks);
        return Err(corrupt(IntentReason::JournalIncomplete { found, expected }));
    }
    let mut nodes = Vec::new();
    for item in items {
        let Some(AttributeValue::L(list)) = item.get(JOURNAL_NODES) else {
            return Err(corrupt(IntentReason::JournalItem));
        };
        for node in list {
            let AttributeValue::M(node) = node else {
                return Err(corrupt(IntentReason::JournalItem));
            };
            nodes.push(from_item::<E>(node.clone())?);
        }
    }
    Ok(nodes)
}

/// The key of a stored item.
fn key_item<E: Entity>(item: &Item) -> Item {
    let is_key = |a: &str| a == pk_attr::<E>() || Some(a) == <E::Table as Table>::SK;
    item.iter().filter(|(a, _)| is_key(a)).map(|(a, v)| (a.clone(), v.clone())).collect()
}

/// Puts `rows` (with `delete`, deletes them) with the batch writer, [`ROWS_PER_STEP`] at a
/// time, reporting progress.
async fn write_rows<E: Entity, S: Strategy<E>>(
    tree: &Tree<'_, E, S>,
    rows: Vec<Item>,
    delete: bool,
    progress: &mut (dyn FnMut(Progress) + Send + '_),
) -> Result<(), Error> {
    let total = rows.len();
    let mut done = 0;
    let mut rows = rows.into_iter().peekable();
    while rows.peek().is_some() {
        let mut batch = tree.db.batch_write();
        for row in rows.by_ref().take(ROWS_PER_STEP) {
            batch = match delete {
                true => batch.delete_raw(E::NAME, key_item::<E>(&row)),
                false => batch.put_raw(E::NAME, row),
            };
            done += 1;
        }
        batch.send().await?;
        progress(Progress { phase: OpPhase::Copy, done, total });
    }
    Ok(())
}

/// The last transaction of a load: `finals`, the deletes of the journal's `chunks` items and
/// of the intent record, if the intent is still `op`'s at its epoch.
async fn finish<E: Entity, S: Strategy<E>>(
    tree: &Tree<'_, E, S>,
    op: &TreeOp,
    finals: Vec<RawAction>,
    chunks: usize,
) -> Result<(), Error> {
    let (pk, op_sk) = (tree.pk.as_str(), S::op_sk());
    let table = tree.db.table_name();
    let mut writes = finals;
    for i in 0..chunks {
        writes.push(delete_plain::<E>(table, pk, journal_sk(&op_sk, i))?);
    }
    let mut x = ExprBuilder::default();
    let cond = fence_cond(&mut x, op);
    writes.push(guarded::<E>(table, (pk, op_sk), Action::delete, cond, x, 0)?);
    let writes = &writes;
    retry::on_conflict(REREAD_CONFLICTS, move |_| async move {
        let mut tx = tree.db.transaction();
        for w in writes {
            tx = tree.push(tx, w.clone());
        }
        let Err(err) = tx.send().await else {
            return Ok(Try::Done(()));
        };
        let f = Failed::new(err);
        if f.at(writes.len() - 1) {
            // Gone: this very transaction, applied by an attempt whose response was lost,
            // or recovery that finished it; otherwise recovery took the load over.
            return match tree.get_raw(&S::op_sk()).await? {
                None => Ok(Try::Done(())),
                Some(_) => Err(superseded::<E>(op)),
            };
        }
        f.conflict().map(Try::Again)
    })
    .await
}

/// `resume` of a pending load `op` (with `progress`): takes it over, then writes every row
/// again from the journal and finishes it. Its `rollback` (without): takes it over, deletes
/// every row it may have written (new items all: the load checked that none existed) and its
/// journal, and removes the intent; the existing parents were not changed (their updates are
/// in the last transaction, which did not happen). A load still checking wrote no row: its
/// intent is removed.
pub(crate) async fn recover<E: Entity, S: Strategy<E>>(
    tree: &Tree<'_, E, S>,
    op: TreeOp,
    progress: Option<&mut ProgressFn<'_>>,
) -> Result<Option<OpReport>, Error> {
    let undo = progress.is_none();
    let Some(op) = tree.take_over(&op).await? else {
        return Ok(None);
    };
    if op.phase == OpPhase::Check {
        // Journal items written so far, then the intent.
        write_rows::<E, S>(tree, journal_items::<E, S>(tree).await?, true, &mut |_| {}).await?;
        tree.clear_intent(&op).await?;
        return Ok(Some(OpReport { nodes: 0, resumable: true }));
    }
    // The journal's items, recorded in the intent of a load in its copy phase.
    let intent = tree.get_raw(&S::op_sk()).await?.unwrap_or_default();
    let chunks = intent_value::<E, usize>(&intent, OP_CHUNKS)?;
    let nodes = read_journal::<E, S>(tree, &op, chunks).await?;
    let count = nodes.len();
    let mut forest = Forest::new::<S>(nodes, tree.db.stamp(false))?;
    let plan = S::load_plan(tree, &mut forest, &op.token).await?;
    match progress {
        Some(progress) => write_rows::<E, S>(tree, plan.rows, false, progress).await?,
        None => write_rows::<E, S>(tree, plan.rows, true, &mut |_| {}).await?,
    }
    let finals = if undo { Vec::new() } else { plan.finals };
    finish::<E, S>(tree, &op, finals, chunks).await?;
    Ok(Some(OpReport { nodes: count, resumable: true }))
}

/// The problem of an id strategy's load (ids escaped in the input, shown unescaped).
pub(crate) fn id_problem<E: Entity>(p: LoadProblem) -> Error {
    use super::node::display;
    problem::<E>(match p {
        LoadProblem::Duplicate(node) => TreeProblem::Duplicate { node: display(&node) },
        LoadProblem::Missing(parent) => TreeProblem::NoParent { parent: display(&parent) },
        LoadProblem::Cycle(node, parent) => {
            TreeProblem::Cycle { node: display(&node), parent: display(&parent) }
        }
    })
}

/// [`TreeProblem::TooDeep`] when the deepest node of `forest` is deeper than `max`, its
/// anchor being at `anchor_depth`.
pub(crate) fn check_depth<E: Entity>(
    forest: &Forest<E>,
    anchor_depth: impl Fn(Option<&str>) -> usize,
    max: usize,
) -> Result<(), Error> {
    match forest.deepest(anchor_depth) {
        Some((i, depth)) if depth > max => Err(problem::<E>(TreeProblem::TooDeep {
            id: super::node::display(&forest.addrs[i]),
            depth,
            max,
        })),
        _ => Ok(()),
    }
}
