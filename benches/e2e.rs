//! End-to-end pairs: ddb-model against the same work written by hand with aws-sdk-dynamodb and
//! serde_dynamo, each pair on a fresh table of the embedded engine, the two sides interleaved
//! round by round (so that drift of the machine hits both), medians over the rounds.
//!
//!     cargo bench --bench e2e                  # 8 rounds, full sizes
//!     DDB_E2E_ROUNDS=3 DDB_E2E_STREAM_ITEMS=50000 cargo bench --bench e2e
//!     DDB_E2E_PAIRS=tree DDB_E2E_INSERTS=2000 DDB_E2E_ROUNDS=6 cargo bench --bench e2e
//!
//! Under `cargo test --benches` (CI) it runs one round at small sizes and checks that both
//! sides did the same work (same items, same requests).
//!
//! Pairs:
//! - `put x2000`: 2,000 sequential `put`s of a 5-field entity (both sides conditioned on the
//!   slot being free or holding the same entity type, as `put` is);
//! - `subtree query`: the subtree of a 1,110-node division of a path tree, all pages;
//! - `get x200`: 200 sequential `get`s;
//! - `tree insert`: 200 path-tree inserts (`DDB_E2E_INSERTS`) against the hand-written
//!   `TransactWriteItems` with the same guarantees (the node is new, the parent exists and
//!   counts the insert, no large operation is under way), idempotency token included;
//! - `put x2000, 64 tasks`: the puts from 64 concurrent tasks (shared state in `Db`, request
//!   accounting and retry budgets, must not serialise them): throughput;
//! - memory: the peak heap while streaming a 200,000-item partition, against reading it all.
//!
//! `DDB_E2E_PAIRS` picks pairs by a part of their names (comma-separated).
//!
//! Wall time with a fresh engine per run: `DDB_E2E_FRESH=<rounds>` runs each side of each
//! counted pair in a process of its own (`DDB_E2E_N` operations after the set-up and warm-up
//! of `DDB_E2E_COUNT`, on a multi-threaded runtime), the sides alternating, and prints the
//! medians: `DDB_E2E_FRESH=6 DDB_E2E_PAIRS=tree_insert cargo bench --bench e2e`.
//!
//! Instruction counts (`benches/instructions.sh e2e`): with `DDB_E2E_COUNT=<pair>:<side>:<n>`
//! the binary sets up one pair on a fresh table, warms both sides up, runs `n` operations of
//! one side on a single-threaded runtime and exits. The script runs it under callgrind with
//! `n = 0` and with `n = N` and divides the difference by `N`: the instructions of one
//! operation, client and embedded engine together, whatever else the machine is doing.

mod support;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicIsize, Ordering};
use std::time::{Duration, Instant};

use ddb_model::aws_sdk_dynamodb::Client;
use ddb_model::aws_sdk_dynamodb::types::{
    AttributeValue, ConditionCheck, Put, TransactWriteItem, Update,
};
use ddb_model::prelude::*;
use ddb_model::{Item, TreePath, local};
use futures_util::StreamExt;
use serde::{Deserialize, Serialize};
use support::{App, Order, Small, check_type, hand_small, order};

// -------------------------------------------------------------------------------------------
// A counting allocator: the current and peak heap of the bench's own threads. The embedded
// engine serves from threads of its own in this process; their allocations (the engine's
// storage and its side of each request) are not the client's and are not counted.
// -------------------------------------------------------------------------------------------

struct Counting;

static CURRENT: AtomicIsize = AtomicIsize::new(0);
static PEAK: AtomicIsize = AtomicIsize::new(0);

thread_local! {
    static TRACKED: Cell<bool> = const { Cell::new(false) };
}

fn tracked() -> bool {
    TRACKED.try_with(Cell::get).unwrap_or(false)
}

/// Counts the allocations of the calling thread from now on.
fn track_this_thread() {
    TRACKED.with(|t| t.set(true));
}

// SAFETY: forwards to the system allocator; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract is the system allocator's.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() && tracked() {
            let size = layout.size() as isize;
            let now = CURRENT.fetch_add(size, Ordering::Relaxed) + size;
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) };
        if tracked() {
            CURRENT.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        }
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// Runs `f` and returns the peak heap of the bench's threads above the heap at the start, in
/// bytes.
async fn peak_of<F: std::future::Future<Output = ()>>(f: F) -> usize {
    let base = CURRENT.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    f.await;
    usize::try_from(PEAK.load(Ordering::Relaxed) - base).unwrap_or(0)
}

// -------------------------------------------------------------------------------------------
// The path tree of the subtree and insert pairs.
// -------------------------------------------------------------------------------------------

#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = App, pk = "DRIVE#<drive>", sk = "FOLDER#<path>", name = "Folder")]
#[hierarchy(path = path, index = gsi1, max_depth = 32)]
struct Folder {
    drive: String,
    path: TreePath,
    files: u32,
}

fn folder(drive: &str, path: &str) -> Folder {
    Folder { drive: drive.into(), path: path.parse().expect("a path"), files: 3 }
}

/// A root, 9 divisions, then 10 children per node down to `levels` levels below the
/// divisions: the paths, parents first.
fn tree_paths(levels: usize) -> Vec<String> {
    let mut all = vec!["r".to_owned()];
    let mut level: Vec<String> = (0..9).map(|d| format!("r/d{d}")).collect();
    for _ in 0..=levels {
        all.extend(level.iter().cloned());
        let next: Vec<String> =
            level.iter().flat_map(|p| (0..10).map(move |c| format!("{p}/n{c}"))).collect();
        level = next;
    }
    all
}

mod hand {
    use super::*;

    /// What `put` does: the item with its keys and entity type, written if the slot is free
    /// or holds the same entity type.
    pub async fn put(client: &Client, table: &str, e: &Small) {
        let item = hand_small::to_item(e).expect("an item");
        client
            .put_item()
            .table_name(table)
            .set_item(Some(item))
            .condition_expression("attribute_not_exists(#pk) OR #type = :type")
            .expression_attribute_names("#pk", "pk")
            .expression_attribute_names("#type", "_type")
            .expression_attribute_values(":type", AttributeValue::S("Small".into()))
            .send()
            .await
            .expect("put");
    }

    pub async fn get(client: &Client, table: &str, id: &str) -> Option<Small> {
        let out = client
            .get_item()
            .table_name(table)
            .key("pk", AttributeValue::S(format!("USER#{id}")))
            .key("sk", AttributeValue::S("PROFILE".into()))
            .send()
            .await
            .expect("get");
        out.item.map(|item| hand_small::from_item(item).expect("a user"))
    }

    /// The escaped text of a path, as in its keys (the segments' separator is escaped).
    pub fn esc(path: &str) -> String {
        path.replace('/', "%2F")
    }

    /// The subtree of `path` (plain segment names), every page, as folders.
    pub async fn subtree(client: &Client, table: &str, drive: &str, path: &str) -> Vec<Folder> {
        let mut out = Vec::new();
        let mut start: Option<Item> = None;
        loop {
            let page = client
                .query()
                .table_name(table)
                .key_condition_expression("#pk = :pk AND begins_with(#sk, :sk)")
                .filter_expression("#type = :type")
                .expression_attribute_names("#pk", "pk")
                .expression_attribute_names("#sk", "sk")
                .expression_attribute_names("#type", "_type")
                .expression_attribute_values(":pk", AttributeValue::S(format!("DRIVE#{drive}")))
                .expression_attribute_values(
                    ":sk",
                    AttributeValue::S(format!("FOLDER#{}%2F", esc(path))),
                )
                .expression_attribute_values(":type", AttributeValue::S("Folder".into()))
                .set_exclusive_start_key(start)
                .send()
                .await
                .expect("query");
            for mut item in page.items.unwrap_or_default() {
                check_type(&item, "Folder").expect("a folder");
                for attr in ["pk", "sk", "gsi1pk", "gsi1sk", "_type", "_tree_rev"] {
                    item.remove(attr);
                }
                out.push(serde_dynamo::from_item(item).expect("a folder"));
            }
            start = page.last_evaluated_key;
            if start.is_none() {
                return out;
            }
        }
    }

    /// A path-tree insert with the library's guarantees, by hand: the node if its path is
    /// free, the parent's revision counted if it is a folder, and no large move or delete
    /// under way in the tree; one transaction with a token. (While one is under way, the
    /// library asks again whether it involves the path; by hand the insert fails.)
    pub async fn tree_insert(client: &Client, table: &str, f: &Folder) {
        let path = f.path.to_string();
        let pk = format!("DRIVE#{}", f.drive);
        let depth = f.path.depth();
        let mut item: Item = serde_dynamo::to_item(f).expect("an item");
        item.insert("pk".into(), AttributeValue::S(pk.clone()));
        item.insert("sk".into(), AttributeValue::S(format!("FOLDER#{}", esc(&path))));
        item.insert("_type".into(), AttributeValue::S("Folder".into()));
        let parent = f.path.parent().map(|p| p.to_string());
        item.insert("gsi1pk".into(), AttributeValue::S(pk.clone()));
        item.insert("gsi1sk".into(), AttributeValue::S(format!("{depth:03}#{}", esc(&path))));
        let s = |v: &str| AttributeValue::S(v.to_owned());
        let put = Put::builder()
            .table_name(table)
            .set_item(Some(item))
            .condition_expression("attribute_not_exists(#pk)")
            .expression_attribute_names("#pk", "pk")
            .build()
            .expect("a put");
        let mut items = vec![TransactWriteItem::builder().put(put).build()];
        if let Some(parent) = &parent {
            let update = Update::builder()
                .table_name(table)
                .key("pk", s(&pk))
                .key("sk", s(&format!("FOLDER#{}", esc(parent))))
                .update_expression("ADD #rev :one")
                .condition_expression("attribute_exists(#pk) AND #type = :type")
                .expression_attribute_names("#rev", "_tree_rev")
                .expression_attribute_names("#pk", "pk")
                .expression_attribute_names("#type", "_type")
                .expression_attribute_values(":one", AttributeValue::N("1".into()))
                .expression_attribute_values(":type", s("Folder"))
                .build()
                .expect("an update");
            items.push(TransactWriteItem::builder().update(update).build());
        }
        let check = ConditionCheck::builder()
            .table_name(table)
            .key("pk", s(&pk))
            .key("sk", s("FOLDER#~op"))
            .expression_attribute_names("#pk", "pk")
            .condition_expression("attribute_not_exists(#pk)")
            .build()
            .expect("a check");
        items.push(TransactWriteItem::builder().condition_check(check).build());
        client
            .transact_write_items()
            .set_transact_items(Some(items))
            .client_request_token(uuid::Uuid::new_v4().to_string())
            .send()
            .await
            .expect("a tree insert");
    }
}

/// The hand-written tree insert writes exactly the item the library writes.
async fn same_tree_items() -> Result<(), Error> {
    let (ours, theirs) = (local::isolated_db::<App>().await?, local::isolated_db::<App>().await?);
    for db in [&ours, &theirs] {
        Folder::tree(db, "D").insert(&folder("D", "r")).await?;
    }
    let node = folder("D", "r/a b");
    Folder::tree(&ours, "D").insert(&node).await?;
    hand::tree_insert(theirs.client(), theirs.table_name(), &node).await;
    let raw = |db: &Db<App>, sk: &'static str| {
        let (client, table) = (db.client().clone(), db.table_name().to_owned());
        async move {
            client
                .get_item()
                .table_name(table)
                .key("pk", AttributeValue::S("DRIVE#D".into()))
                .key("sk", AttributeValue::S(sk.into()))
                .send()
                .await
                .expect("get")
                .item
        }
    };
    for sk in ["FOLDER#r%2Fa b", "FOLDER#r"] {
        let (a, b) = (raw(&ours, sk).await, raw(&theirs, sk).await);
        assert!(a.is_some(), "{sk} written");
        assert_eq!(a, b, "the hand-written insert writes what the library writes at {sk}");
    }
    Ok(())
}

fn user(i: usize) -> Small {
    Small { id: format!("u{i:05}"), ..support::small() }
}

/// A number from the environment, or `default`.
fn env_or(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// Whether `DDB_E2E_PAIRS` (comma-separated parts of pair names; unset: every pair) picks
/// the pair.
fn selected(name: &str) -> bool {
    std::env::var("DDB_E2E_PAIRS")
        .map(|picked| picked.split(',').any(|p| name.contains(p.trim())))
        .unwrap_or(true)
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

struct Pair {
    name: &'static str,
    ours: Vec<Duration>,
    hand: Vec<Duration>,
}

impl Pair {
    fn new(name: &'static str) -> Pair {
        Pair { name, ours: Vec::new(), hand: Vec::new() }
    }
}

/// One round of every pair, each side on a fresh table, the order of the sides alternating
/// with the round.
async fn round(r: usize, quick: bool, pairs: &mut [Pair]) -> Result<(), Error> {
    let puts = if quick { 100 } else { 2_000 };
    let gets = if quick { 20 } else { 200 };
    let levels = if quick { 1 } else { 2 };
    let inserts = if quick { 20 } else { env_or("DDB_E2E_INSERTS", 200) };
    let concurrent = if quick { 128 } else { 2_000 };
    let ours_first = r.is_multiple_of(2);
    for (i, pair) in pairs.iter_mut().enumerate() {
        if !selected(pair.name) {
            continue;
        }
        for side in 0..2 {
            let ours = (side == 0) == ours_first;
            let db = local::isolated_db::<App>().await?;
            // The hand-written side's own client: `Db` adds its accounting interceptor to
            // the client it is given, and the hand-written code would not have it.
            let (client, table) = (local::client()?, db.table_name().to_owned());
            let took = match i {
                0 => {
                    let users: Vec<Small> = (0..puts).map(user).collect();
                    let t = Instant::now();
                    for u in &users {
                        if ours {
                            db.put(u).await?;
                        } else {
                            hand::put(&client, &table, u).await;
                        }
                    }
                    t.elapsed()
                }
                1 => {
                    let paths = tree_paths(levels);
                    let nodes: Vec<Folder> = paths.iter().map(|p| folder("D", p)).collect();
                    db.batch_put(&nodes).await?;
                    let root: TreePath = "r/d4".parse().map_err(Error::from)?;
                    let expect = paths.iter().filter(|p| p.starts_with("r/d4/")).count();
                    let t = Instant::now();
                    let n = if ours {
                        Folder::tree(&db, "D").descendants(&root).all().await?.len()
                    } else {
                        hand::subtree(&client, &table, "D", "r/d4").await.len()
                    };
                    let took = t.elapsed();
                    assert_eq!(n, expect, "the subtree");
                    took
                }
                2 => {
                    let users: Vec<Small> = (0..gets).map(user).collect();
                    db.batch_put(&users).await?;
                    let t = Instant::now();
                    for u in &users {
                        let found = if ours {
                            Small::get(&db, u.id.as_str()).await?
                        } else {
                            hand::get(&client, &table, &u.id).await
                        };
                        assert!(found.is_some());
                    }
                    t.elapsed()
                }
                3 => {
                    let tree = Folder::tree(&db, "D");
                    tree.insert(&folder("D", "r")).await?;
                    let nodes: Vec<Folder> =
                        (0..inserts).map(|k| folder("D", &format!("r/n{k:04}"))).collect();
                    let t = Instant::now();
                    for f in &nodes {
                        if ours {
                            tree.insert(f).await?;
                        } else {
                            hand::tree_insert(&client, &table, f).await;
                        }
                    }
                    let took = t.elapsed();
                    assert_eq!(
                        tree.children(&"r".parse().map_err(Error::from)?).count().await?,
                        inserts
                    );
                    took
                }
                _ => {
                    let users: Vec<Small> = (0..concurrent).map(user).collect();
                    let per = users.len() / 64;
                    let t = Instant::now();
                    let tasks: Vec<_> = users
                        .chunks(per.max(1))
                        .map(|chunk| {
                            let (db, client, table, chunk) =
                                (db.clone(), client.clone(), table.clone(), chunk.to_vec());
                            tokio::spawn(async move {
                                for u in &chunk {
                                    if ours {
                                        db.put(u).await.expect("put");
                                    } else {
                                        hand::put(&client, &table, u).await;
                                    }
                                }
                            })
                        })
                        .collect();
                    for task in tasks {
                        task.await.expect("a put task");
                    }
                    t.elapsed()
                }
            };
            // The engine is shared by every round: a table left behind would make the
            // next side's engine larger than this one's.
            db.delete_table().await?;
            if ours {
                pair.ours.push(took);
            } else {
                pair.hand.push(took);
            }
        }
    }
    Ok(())
}

/// The peak heap while streaming `n` orders of one partition, and while reading them all.
async fn memory(n: u64) -> Result<(usize, usize), Error> {
    let db = local::isolated_db::<App>().await?;
    for chunk in (0..n).collect::<Vec<_>>().chunks(10_000) {
        let orders: Vec<Order> = chunk.iter().map(|&i| order("big", i)).collect();
        db.batch_put(&orders).await?;
    }
    let streamed = peak_of(async {
        let mut stream = Order::query(&db, "big").stream();
        let mut count = 0u64;
        while let Some(o) = stream.next().await {
            o.expect("an order");
            count += 1;
        }
        assert_eq!(count, n);
    })
    .await;
    let all = peak_of(async {
        let all = Order::query(&db, "big").all().await.expect("all");
        assert_eq!(all.len() as u64, n);
    })
    .await;
    Ok((streamed, all))
}

/// The pairs counted in instruction-count mode (`DDB_E2E_COUNT=list` prints them).
const COUNTED: &[&str] = &["put", "put_capacity", "get", "get_capacity", "tree_insert", "subtree"];

/// One side of one pair, `n` times, after a set-up that does not depend on `n`.
async fn count(pair: &str, side: &str, n: usize) -> Result<Duration, Error> {
    let ours = match side {
        "ddb-model" => true,
        "hand-written" => false,
        other => panic!("side {other}: ddb-model or hand-written"),
    };
    let db = local::isolated_db::<App>().await?;
    // `_capacity`: the library asks for capacity reports (off by default; the hand-written
    // code never asks).
    let db = if pair.ends_with("_capacity") { db.with_capacity(true) } else { db };
    // The hand-written side's own client, without the library's interceptor.
    let (client, table) = (local::client()?, db.table_name().to_owned());
    let warm = 20;
    let took = match pair.trim_end_matches("_capacity") {
        "put" => {
            let users: Vec<Small> = (0..warm + n).map(user).collect();
            for u in &users[..warm] {
                db.put(u).await?;
                hand::put(&client, &table, u).await;
            }
            let t = Instant::now();
            for u in &users[warm..] {
                if ours {
                    db.put(u).await?;
                } else {
                    hand::put(&client, &table, u).await;
                }
            }
            t.elapsed()
        }
        "get" => {
            let users: Vec<Small> = (0..200).map(user).collect();
            db.batch_put(&users).await?;
            for u in &users[..warm] {
                Small::get(&db, u.id.as_str()).await?;
                hand::get(&client, &table, &u.id).await;
            }
            let t = Instant::now();
            for u in users.iter().cycle().take(n) {
                let found = if ours {
                    Small::get(&db, u.id.as_str()).await?
                } else {
                    hand::get(&client, &table, &u.id).await
                };
                assert!(found.is_some());
            }
            t.elapsed()
        }
        "tree_insert" => {
            let tree = Folder::tree(&db, "D");
            tree.insert(&folder("D", "r")).await?;
            let nodes: Vec<Folder> =
                (0..2 * warm + n).map(|k| folder("D", &format!("r/n{k:04}"))).collect();
            for pair in nodes[..2 * warm].chunks(2) {
                tree.insert(&pair[0]).await?;
                hand::tree_insert(&client, &table, &pair[1]).await;
            }
            let t = Instant::now();
            for f in &nodes[2 * warm..] {
                if ours {
                    tree.insert(f).await?;
                } else {
                    hand::tree_insert(&client, &table, f).await;
                }
            }
            t.elapsed()
        }
        "subtree" => {
            let nodes: Vec<Folder> = tree_paths(1).iter().map(|p| folder("D", p)).collect();
            db.batch_put(&nodes).await?;
            let root: TreePath = "r/d4".parse().map_err(Error::from)?;
            let expect = 10;
            for _ in 0..warm {
                assert_eq!(Folder::tree(&db, "D").descendants(&root).all().await?.len(), expect);
                assert_eq!(hand::subtree(&client, &table, "D", "r/d4").await.len(), expect);
            }
            let t = Instant::now();
            for _ in 0..n {
                let got = if ours {
                    Folder::tree(&db, "D").descendants(&root).all().await?.len()
                } else {
                    hand::subtree(&client, &table, "D", "r/d4").await.len()
                };
                assert_eq!(got, expect, "the subtree");
            }
            t.elapsed()
        }
        other => panic!("pair {other}: one of {COUNTED:?}"),
    };
    Ok(took)
}

/// Wall time with a fresh engine per run: each side of each counted pair (picked by
/// `DDB_E2E_PAIRS`) runs `n` operations in a process of its own (`DDB_E2E_N`, default 2,000),
/// the sides alternating, `rounds` rounds; prints the medians.
fn fresh(rounds: usize) -> Result<(), Error> {
    let exe = std::env::current_exe().expect("the bench's own path");
    let n = env_or("DDB_E2E_N", 2_000);
    println!(
        "| pair ({n} operations, fresh engine per run) | ddb-model (median) | hand-written (median) | ratio |"
    );
    println!("| --- | ---: | ---: | ---: |");
    for pair in COUNTED.iter().filter(|p| selected(p)) {
        let (mut ours, mut hand) = (Vec::new(), Vec::new());
        for r in 0..rounds {
            let sides = if r % 2 == 0 {
                ["ddb-model", "hand-written"]
            } else {
                ["hand-written", "ddb-model"]
            };
            for side in sides {
                let out = std::process::Command::new(&exe)
                    .env("DDB_E2E_COUNT", format!("{pair}:{side}:{n}"))
                    .env("DDB_E2E_TIMED", "1")
                    .output()
                    .expect("a run");
                let nanos: u64 =
                    String::from_utf8_lossy(&out.stdout).trim().parse().expect("its time");
                let took = Duration::from_nanos(nanos);
                if side == "ddb-model" { ours.push(took) } else { hand.push(took) }
            }
        }
        let (ours, hand) = (median(ours), median(hand));
        println!(
            "| {pair} | {:.1} ms | {:.1} ms | {:.3}× |",
            ours.as_secs_f64() * 1e3,
            hand.as_secs_f64() * 1e3,
            ours.as_secs_f64() / hand.as_secs_f64()
        );
    }
    Ok(())
}

fn main() -> Result<(), Error> {
    if let Ok(spec) = std::env::var("DDB_E2E_COUNT") {
        if spec == "list" {
            COUNTED.iter().for_each(|p| println!("{p}"));
            return Ok(());
        }
        let mut parts = spec.split(':');
        let (pair, side) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
        let n = parts.next().and_then(|n| n.parse().ok()).unwrap_or(0);
        // Timed (a child of `DDB_E2E_FRESH`): a multi-threaded runtime, as an application's.
        let timed = std::env::var("DDB_E2E_TIMED").is_ok();
        let rt = if timed {
            tokio::runtime::Builder::new_multi_thread().enable_all().build()
        } else {
            tokio::runtime::Builder::new_current_thread().enable_all().build()
        };
        let took = rt.expect("runtime").block_on(count(pair, side, n))?;
        if timed {
            println!("{}", took.as_nanos());
        }
        return Ok(());
    }
    if let Ok(rounds) = std::env::var("DDB_E2E_FRESH") {
        return fresh(rounds.parse().unwrap_or(6));
    }
    // `cargo bench` passes `--bench`; `cargo test --benches` does not: one quick round.
    let quick = !std::env::args().any(|a| a == "--bench");
    let rounds: usize = if quick {
        1
    } else {
        std::env::var("DDB_E2E_ROUNDS").ok().and_then(|r| r.parse().ok()).unwrap_or(8)
    };
    track_this_thread();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .on_thread_start(track_this_thread)
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let mut pairs = [
            Pair::new("put x2000"),
            Pair::new("subtree query (1,110 nodes)"),
            Pair::new("get x200"),
            Pair::new(if quick { "tree insert x20" } else { "tree insert" }),
            Pair::new("put x2000, 64 tasks"),
        ];
        same_tree_items().await?;
        // A warm-up round, not counted.
        round(1, true, &mut pairs).await?;
        for p in &mut pairs {
            p.ours.clear();
            p.hand.clear();
        }
        for r in 0..rounds {
            round(r, quick, &mut pairs).await?;
        }
        println!("| pair | ddb-model (median) | hand-written (median) | ratio |");
        println!("| --- | ---: | ---: | ---: |");
        for p in pairs.into_iter().filter(|p| !p.ours.is_empty()) {
            let (ours, hand) = (median(p.ours), median(p.hand));
            println!(
                "| {} | {:.1} ms | {:.1} ms | {:.3}× |",
                p.name,
                ours.as_secs_f64() * 1e3,
                hand.as_secs_f64() * 1e3,
                ours.as_secs_f64() / hand.as_secs_f64()
            );
        }
        if !selected("memory") {
            return Ok(());
        }
        let n = if quick {
            5_000
        } else {
            std::env::var("DDB_E2E_STREAM_ITEMS")
                .ok()
                .and_then(|n| n.parse().ok())
                .unwrap_or(200_000)
        };
        let (streamed, all) = memory(n).await?;
        println!(
            "\nstreaming {n} items: peak heap {:.1} MiB; reading them all: {:.1} MiB",
            streamed as f64 / 1048576.0,
            all as f64 / 1048576.0
        );
        // A page's response, decoded, is the floor of both (about 15 MiB per 1 MB page);
        // reading everything adds the partition on top, streaming does not.
        if n >= 100_000 {
            assert!(streamed * 2 < all, "streaming holds a page or two, not the partition");
        }
        Ok(())
    })
}
