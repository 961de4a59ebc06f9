//! The soak of issue 13, item 11: random tree (path, closure, adjacency), edge and counter
//! operations from several tasks, each through a fault proxy of `ddb_model::testing` that
//! loses responses after the write or drops requests before the engine, with large
//! operations abandoned mid-way (cut off for good after a few requests,
//! `Faults::fail_from`) and resumed or rolled back by other tasks. Afterwards, from a clean connection, every
//! invariant is checked: trees are trees (no orphan, closure ancestors and subtree sizes agree
//! with the parent fields, adjacency child counters are exact), no intent is left, edges and
//! counters equal the in-memory model of what succeeded.
//!
//! Sized by `DDB_SOAK_OPS` (operations per task, default 400) and `DDB_SOAK_TASKS` (default 4).
//! `DDB_SOAK_ONLY` (a comma-separated list of `path`, `closure`, `adjacency`, `edge`,
//! `counter`) narrows the mix to some families, to chase one of them under more pressure.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::future::IntoFuture;

use ddb_model::prelude::*;
use ddb_model::testing::{Faults, Harness};
use ddb_model::tree::TreeProblem;
use ddb_model::{DefaultTable, TreePath};

use crate::fencing::{Adj, Boxed, Doc, Link};
use crate::model::Counter;
use crate::support::{self, db};

/// `DDB_SOAK_TRACE=FILE` writes every closure operation's start and end there (to follow a
/// failure back to the operations that caused it).
static TRACE: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

fn trace(line: String) {
    if std::env::var_os("DDB_SOAK_TRACE").is_some() {
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_micros());
        TRACE.lock().expect("trace").push(format!("{t} {line}"));
    }
}

fn write_trace() {
    if let Some(file) = std::env::var_os("DDB_SOAK_TRACE") {
        let lines = TRACE.lock().expect("trace").join("\n");
        std::fs::write(file, lines).expect("trace file");
    }
}

/// Runs `f` between two trace lines naming it.
async fn traced<T, F: std::future::Future<Output = Result<T, Error>>>(
    what: String,
    f: F,
) -> Result<T, Error> {
    trace(format!("start {what}"));
    let r = f.await;
    match &r {
        Ok(_) => trace(format!("end {what}: ok")),
        Err(e) => trace(format!("end {what}: {e}")),
    }
    r
}

fn env(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// xorshift64*: a small deterministic generator (seeded per task).
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 33) as usize % n.max(1)
    }
}

const NAMES: [&str; 4] = ["a", "b", "c", "d"];
const SPACE: &str = "soak";

fn random_path(rng: &mut Rng) -> TreePath {
    let depth = 1 + rng.below(3);
    let parts: Vec<&str> = (0..depth).map(|_| NAMES[rng.below(NAMES.len())]).collect();
    parts.join("/").parse().expect("a valid path")
}

/// The families of operations the soak mixes, as `DDB_SOAK_ONLY` names them.
const FAMILIES: [&str; 5] = ["path", "closure", "adjacency", "edge", "counter"];

/// The family of operation kind `k` (0..20, as drawn in `task`); `None` for the kinds that
/// pick a tree strategy themselves (14: abandon a large operation, 15: recover).
fn family(k: usize) -> Option<&'static str> {
    match k {
        0..=4 => Some("path"),
        5..=8 => Some("closure"),
        9..=13 => Some("adjacency"),
        14 | 15 => None,
        16..=17 => Some("edge"),
        _ => Some("counter"),
    }
}

/// The families this run mixes (`DDB_SOAK_ONLY`, default all).
fn families() -> Vec<&'static str> {
    match std::env::var("DDB_SOAK_ONLY") {
        Ok(only) if !only.trim().is_empty() => {
            let only: Vec<&str> = only.split(',').map(str::trim).collect();
            FAMILIES.iter().copied().filter(|f| only.contains(f)).collect()
        }
        _ => FAMILIES.to_vec(),
    }
}

/// Draws an operation kind whose family is mixed in; for kinds 14 and 15 also the tree
/// strategy (0 path, 1 closure, 2 adjacency) among the mixed ones.
fn draw(rng: &mut Rng, mixed: &[&str]) -> (usize, usize) {
    const TREES: [&str; 3] = ["path", "closure", "adjacency"];
    let trees: Vec<usize> = (0..3).filter(|&i| mixed.contains(&TREES[i])).collect();
    loop {
        let k = rng.below(20);
        let strategy = rng.below(3);
        match family(k) {
            Some(f) if mixed.contains(&f) => return (k, strategy),
            None if !trees.is_empty() => return (k, trees[strategy % trees.len()]),
            _ => {}
        }
    }
}

fn random_id(rng: &mut Rng) -> String {
    format!("n{}", rng.below(14))
}

/// Errors that are a bug whatever the interleaving: corrupt bookkeeping, an unmapped
/// transaction cancellation of a tree write, a transaction the library built but refused to
/// send (one naming an item twice).
fn is_bug(err: &Error) -> bool {
    matches!(
        err,
        Error::Tree {
            problem: TreeProblem::CorruptNode { .. } | TreeProblem::CorruptIntent { .. },
            ..
        } | Error::TransactionCanceled { .. }
            | Error::InvalidTransaction { .. }
    )
}

#[derive(Default)]
struct Outcome {
    /// Edges this task's hub links to, as the model says.
    edges: BTreeSet<String>,
    /// Successful `add(1)` on this task's counter.
    adds: i64,
    ops: usize,
    failures: BTreeMap<String, usize>,
    bugs: Vec<String>,
}

impl Outcome {
    fn record<T>(&mut self, what: &str, result: Result<T, Error>) -> Option<T> {
        self.ops += 1;
        match result {
            Ok(v) => Some(v),
            Err(err) => {
                if is_bug(&err) {
                    self.bugs.push(format!("{what}: {err}"));
                }
                let kind = match &err {
                    Error::Tree { problem, .. } => {
                        format!("{problem:?}").split([' ', '{', '(']).next().unwrap_or("").into()
                    }
                    other => {
                        format!("{other:?}").split([' ', '{', '(']).next().unwrap_or("").into()
                    }
                };
                *self.failures.entry(kind).or_default() += 1;
                None
            }
        }
    }
}

async fn task(clean: Db, t: usize, ops: usize) -> Result<Outcome, Error> {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ (t as u64 + 1).wrapping_mul(0xBF58_476D_1CE4_E5B9));
    let faults = Faults::seeded(t as u64);
    let faults = if t.is_multiple_of(2) {
        faults.drop_after(1.0 / (7 + t) as f64)
    } else {
        faults.drop_before(1.0 / (5 + t) as f64)
    };
    let harness = Harness::on(clean.clone(), faults).await?;
    let db = harness.db().clone();
    let mut out = Outcome::default();
    let hub = format!("hub{t}");
    let counter = format!("c{t}");
    let mixed = families();
    for _ in 0..ops {
        let docs = Doc::tree(&db, SPACE);
        let boxes = Boxed::tree(&db, SPACE);
        let adj = Adj::tree(&db, SPACE);
        let (kind, strategy) = draw(&mut rng, &mixed);
        match kind {
            0..=2 => {
                let path = random_path(&mut rng);
                let doc = Doc { space: SPACE.into(), path, body: format!("t{t}") };
                out.record("path insert", docs.insert(&doc).await);
            }
            3 => {
                let (from, to) = (random_path(&mut rng), random_path(&mut rng));
                let limit = if rng.below(2) == 0 { 0 } else { 49 };
                let r = docs.move_subtree(&from, &to).transaction_limit(limit).await;
                out.record("path move", r);
            }
            4 => {
                let path = random_path(&mut rng);
                let r = docs.delete_subtree(&path).transaction_limit(rng.below(2) * 99).await;
                out.record("path delete", r);
            }
            5..=6 => {
                let (id, parent) = (random_id(&mut rng), random_id(&mut rng));
                let parent = (rng.below(3) > 0).then_some(parent);
                let node = Boxed { owner: SPACE.into(), id, parent, body: format!("t{t}") };
                let what = format!("t{t} insert {} under {:?}", node.id, node.parent);
                out.record("closure insert", traced(what, boxes.insert(&node)).await);
            }
            7 => {
                let (id, parent) = (random_id(&mut rng), random_id(&mut rng));
                let limit = if rng.below(2) == 0 { 0 } else { 10 };
                let what = format!("t{t} move {id} under {parent} limit {limit}");
                let mv = boxes.move_subtree(id.as_str(), parent.as_str()).transaction_limit(limit);
                out.record("closure move", traced(what, mv.into_future()).await);
            }
            8 => {
                let id = random_id(&mut rng);
                let limit = if rng.below(2) == 0 { 0 } else { 10 };
                let what = format!("t{t} delete {id} limit {limit}");
                let del = boxes.delete_subtree(id.as_str()).transaction_limit(limit);
                out.record("closure delete", traced(what, del.into_future()).await);
            }
            9..=10 => {
                let (id, parent) = (random_id(&mut rng), random_id(&mut rng));
                let parent = (rng.below(3) > 0).then_some(parent);
                let node = Adj { owner: SPACE.into(), id, parent, body: format!("t{t}") };
                out.record("adjacency insert", adj.insert(&node).await);
            }
            11 => {
                let (id, parent) = (random_id(&mut rng), random_id(&mut rng));
                out.record("adjacency move", adj.move_subtree(id.as_str(), parent.as_str()).await);
            }
            12 => {
                let id = random_id(&mut rng);
                let limit = if rng.below(2) == 0 { 0 } else { 99 };
                out.record(
                    "adjacency delete",
                    adj.delete_subtree(id.as_str()).transaction_limit(limit).await,
                );
            }
            13 => {
                let id = random_id(&mut rng);
                let r = Adj::update(&db, SPACE, id.as_str()).set(Adj::BODY, format!("u{t}")).await;
                // A node that does not exist is not an error of interest.
                let _ = r;
            }
            14 => {
                // A large operation abandoned mid-way: its runner is cut off for good.
                let cut = Faults::seeded(0).fail_from(3 + rng.below(10) as u64);
                let cut = Harness::on(clean.clone(), cut).await?;
                let dying = cut.db();
                let _ = match strategy {
                    0 => Doc::tree(dying, SPACE)
                        .move_subtree(&random_path(&mut rng), &random_path(&mut rng))
                        .transaction_limit(0)
                        .await
                        .map(|_| ()),
                    1 => {
                        let (id, parent) = (random_id(&mut rng), random_id(&mut rng));
                        let tree = Boxed::tree(dying, SPACE);
                        let mv = tree.move_subtree(id.as_str(), parent.as_str());
                        let what = format!("t{t} abandoned move {id} under {parent}");
                        traced(what, mv.transaction_limit(0).into_future()).await.map(|_| ())
                    }
                    _ => Adj::tree(dying, SPACE)
                        .delete_subtree(random_id(&mut rng).as_str())
                        .transaction_limit(0)
                        .await
                        .map(|_| ()),
                };
            }
            15 => {
                // Recovery by another task (possibly while the operation still runs).
                let rollback = rng.below(3) == 0;
                match strategy {
                    0 if rollback => out.record("path rollback", docs.rollback().await.map(|_| ())),
                    0 => out.record("path resume", docs.resume(|_| {}).await.map(|_| ())),
                    1 if rollback => {
                        let r = traced(format!("t{t} rollback"), boxes.rollback()).await;
                        out.record("closure rollback", r.map(|_| ()))
                    }
                    1 => {
                        let r = traced(format!("t{t} resume"), boxes.resume(|_| {})).await;
                        out.record("closure resume", r.map(|_| ()))
                    }
                    _ => out.record("adjacency resume", adj.resume(|_| {}).await.map(|_| ())),
                };
            }
            16..=17 => {
                let other = format!("m{}", rng.below(6));
                let links = Link::edges(&db);
                let edge = Link { a: hub.clone(), b: other.clone() };
                if rng.below(8) == 0 {
                    let removed = links.remove_node(hub.clone()).await;
                    if out.record("remove_node", removed).is_some_and(|r| r.done) {
                        out.edges.clear();
                    }
                } else if rng.below(2) == 0 {
                    if out.record("link", links.link(&edge).await).is_some() {
                        out.edges.insert(other);
                    }
                } else if out
                    .record("unlink", links.unlink(hub.clone(), other.clone()).await)
                    .is_some()
                {
                    out.edges.remove(&other);
                }
            }
            _ => {
                let r = Counter::update(&db, counter.as_str()).add(Counter::N, 1).no_return().await;
                if out.record("add", r).is_some() {
                    out.adds += 1;
                }
            }
        }
    }
    Ok(out)
}

/// Finishes whatever is pending (a few rounds: a recovery may find another still running).
async fn settle(clean: &Db) -> Result<(), Error> {
    let mut errors = Vec::new();
    for _ in 0..10 {
        let docs = Doc::tree(clean, SPACE);
        let boxes = Boxed::tree(clean, SPACE);
        let adj = Adj::tree(clean, SPACE);
        errors = Vec::new();
        if let Err(e) = docs.resume(|_| {}).await {
            errors.push(format!("path: {e}"));
        }
        if let Err(e) = boxes.resume(|_| {}).await {
            errors.push(format!("closure: {e}"));
        }
        if let Err(e) = adj.resume(|_| {}).await {
            errors.push(format!("adjacency: {e}"));
        }
        if docs.pending().await?.is_none()
            && boxes.pending().await?.is_none()
            && adj.pending().await?.is_none()
        {
            return Ok(());
        }
    }
    let adjacency: Vec<String> = support::snapshot(clean)
        .await
        .into_iter()
        .filter(|i| i.contains("ADJ#soak") || i.contains("Adj:tree-op"))
        .collect();
    panic!("operations still pending after recovery: {errors:?}\nadjacency items: {adjacency:#?}");
}

/// The ids of the closure tree's entity items and of its own copies, read raw.
async fn closure_bookkeeping(clean: &Db) -> (BTreeSet<String>, BTreeSet<String>) {
    let (mut entities, mut owns) = (BTreeSet::new(), BTreeSet::new());
    let mut start = None;
    loop {
        let out = clean
            .client()
            .query()
            .table_name(clean.table_name())
            .key_condition_expression("pk = :pk")
            .expression_attribute_values(
                ":pk",
                ddb_model::aws_sdk_dynamodb::types::AttributeValue::S(format!("BOX#{SPACE}")),
            )
            .consistent_read(true)
            .set_exclusive_start_key(start)
            .send()
            .await
            .expect("a raw query");
        for item in out.items() {
            let text = |a: &str| item.get(a).and_then(|v| v.as_s().ok()).cloned();
            let (Some(sk), Some(id)) = (text("sk"), text("id")) else { continue };
            if sk == format!("ITEM#{id}") {
                entities.insert(id);
            } else if sk == format!("ITEM#~c#{id}#000#{id}") {
                owns.insert(id);
            }
        }
        start = out.last_evaluated_key;
        if start.is_none() {
            return (entities, owns);
        }
    }
}

#[tokio::test]
async fn soak_random_operations_with_faults_keep_every_invariant() -> Result<(), Error> {
    let ops = env("DDB_SOAK_OPS", 400);
    let tasks = env("DDB_SOAK_TASKS", 4);
    let clean = db::<DefaultTable>().await;
    for t in 0..tasks {
        Counter { name: format!("c{t}"), n: 0, log: vec![] }.create(&clean).await?;
    }
    let handles: Vec<_> = (0..tasks).map(|t| tokio::spawn(task(clean.clone(), t, ops))).collect();
    let mut outcomes = Vec::new();
    for h in handles {
        outcomes.push(h.await.expect("a soak task")?);
    }
    settle(&clean).await?;
    write_trace();

    // Path tree: every node's parent exists.
    let docs = Doc::tree(&clean, SPACE).nodes().consistent().all().await?;
    let paths: BTreeSet<String> = docs.iter().map(|d| d.path.to_string()).collect();
    for d in &docs {
        if let Some(parent) = d.path.parent() {
            assert!(paths.contains(&parent.to_string()), "{} has no parent", d.path);
        }
    }

    // Closure tree: ancestors and subtree sizes agree with the parent fields.
    let boxes = Boxed::tree(&clean, SPACE);
    let nodes = boxes.nodes().consistent().all().await?;
    let closure_items = || async {
        support::snapshot(&clean)
            .await
            .into_iter()
            .filter(|i| i.contains("BOX#soak"))
            .collect::<Vec<String>>()
    };
    let listed: BTreeSet<&str> = nodes.iter().map(|n| n.id.as_str()).collect();
    if listed.len() != nodes.len() {
        panic!("a closure node is listed twice under the tree:\n{:#?}", closure_items().await);
    }
    // Every node is whole: its entity item, its own copy and its copy under the tree, and
    // nothing of a node that is not listed.
    let (entities, owns) = closure_bookkeeping(&clean).await;
    let listed: BTreeSet<String> = listed.into_iter().map(str::to_owned).collect();
    if entities != listed || owns != listed {
        panic!(
            "closure nodes are not whole: listed {listed:?}, entity items {entities:?}, own copies {owns:?}\n{:#?}",
            closure_items().await
        );
    }
    let parent: HashMap<String, Option<String>> =
        nodes.iter().map(|n| (n.id.clone(), n.parent.clone())).collect();
    let chain = |id: &str| {
        let mut up = Vec::new();
        let mut cur = parent.get(id).cloned().flatten();
        while let Some(p) = cur {
            assert!(up.len() <= parent.len(), "a cycle above {id}");
            assert!(parent.contains_key(&p), "{id}: its ancestor {p} is missing");
            cur = parent.get(&p).cloned().flatten();
            up.push(p);
        }
        up.reverse();
        up
    };
    for n in &nodes {
        let ancestors: Vec<String> =
            boxes.ancestors(n.id.as_str()).await?.into_iter().map(|a| a.id).collect();
        assert_eq!(ancestors, chain(&n.id), "ancestors of {}", n.id);
        let size = nodes.iter().filter(|m| m.id == n.id || chain(&m.id).contains(&n.id)).count();
        let stored = boxes.subtree_size(n.id.as_str()).await?;
        if stored != size as u64 {
            panic!(
                "subtree of {}: {stored} copies, {size} nodes\n{:#?}",
                n.id,
                closure_items().await
            );
        }
    }

    // Adjacency tree: parents exist, child counters are exact.
    let adj = Adj::tree(&clean, SPACE);
    let mut adj_nodes = Vec::new();
    for i in 0..14 {
        if let Some(n) = adj.get(format!("n{i}").as_str()).await? {
            adj_nodes.push(n);
        }
    }
    let ids: BTreeSet<String> = adj_nodes.iter().map(|n| n.id.clone()).collect();
    for n in &adj_nodes {
        if let Some(p) = &n.parent {
            assert!(ids.contains(p), "adjacency node {} has no parent {p}", n.id);
        }
        let kids = adj_nodes.iter().filter(|m| m.parent.as_deref() == Some(n.id.as_str())).count();
        let item = support::raw(&clean, &format!("ADJ#{SPACE}"), &format!("N#{}", n.id)).await;
        let stored = item.as_ref().and_then(|i| i.get("_tree_kids")).and_then(|v| v.as_n().ok());
        let stored: usize = stored.map_or(0, |s| s.parse().expect("a counter"));
        assert_eq!(stored, kids, "the child counter of {}", n.id);
    }

    // No removal left its fence record behind.
    let items = support::snapshot(&clean).await;
    assert!(!items.iter().any(|i| i.contains("~remove#")), "a fence record was left");

    // Edges and counters: exactly what succeeded.
    let links = Link::edges(&clean);
    let mut summary: BTreeMap<String, usize> = BTreeMap::new();
    let mut total_ops = 0;
    for (t, out) in outcomes.iter().enumerate() {
        let outgoing: BTreeSet<String> =
            links.outgoing(format!("hub{t}")).all().await?.into_iter().map(|l| l.b).collect();
        assert_eq!(outgoing, out.edges, "the edges of hub{t}");
        for other in &out.edges {
            let incoming: Vec<Link> = links.incoming(other.clone()).all().await?;
            assert!(
                incoming.iter().any(|l| l.a == format!("hub{t}")),
                "the inverse of hub{t} -> {other}"
            );
        }
        let counter = Counter::get(&clean, format!("c{t}").as_str()).await?.expect("counter");
        assert_eq!(counter.n, out.adds, "counter c{t}");
        assert!(out.bugs.is_empty(), "task {t}: {:?}", out.bugs);
        for (k, v) in &out.failures {
            *summary.entry(k.clone()).or_default() += v;
        }
        total_ops += out.ops;
    }
    println!(
        "soak: {total_ops} operations from {tasks} tasks; {} path, {} closure, {} adjacency nodes; refusals: {summary:?}",
        docs.len(),
        nodes.len(),
        adj_nodes.len()
    );
    Ok(())
}
