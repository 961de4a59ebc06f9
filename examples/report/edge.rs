//! Graph edges: link, unlink and update (both sides and the counters in one transaction),
//! batches, outgoing and incoming reads (inverse items and an inverting index), counters,
//! merges, traversals and node removal, on a generated follow graph.
//!
//! Expected counts of the reads that depend on the graph (merges, traversals, removal) are
//! computed from the generated edges, following the rules the library documents: a node's
//! edges are read in exact pages (`ceil(d / page)` requests, one when there are none), a merge
//! reads pages until one list is exhausted, a traversal reads every node it expands.

use std::cmp::Ordering;
use std::collections::{BTreeSet, HashMap, HashSet};

use ddb_model::prelude::*;
use ddb_model::{Edge, Item, item::item_size, local};
use serde::{Deserialize, Serialize};

use crate::Scale;
use crate::measure::{Section, measure};

#[derive(Table)]
#[table(name = "edges", pk = "pk", sk = "sk", gsi(name = "gsi1", pk = "gsi1pk", sk = "gsi1sk"))]
pub struct Social;

/// A member, with the counters the follows keep.
#[derive(Entity, Serialize, Deserialize, Debug, Clone)]
#[entity(table = Social, pk = "MEMBER#<id>", sk = "PROFILE")]
pub struct Member {
    id: String,
    name: String,
    #[serde(default)]
    following: u64,
    #[serde(default)]
    followers: u64,
}

/// `follower` follows `followee`: the inverse item, in the followee's partition, carries the
/// follower's name and the date (denormalised), not `muted`; both counters move with it.
#[derive(Entity, Edge, Serialize, Deserialize, Debug, Clone)]
#[entity(table = Social, pk = "MEMBER#<follower>", sk = "FOLLOWS#<followee>")]
#[edge(
    from = follower,
    to = followee,
    inverse(pk = "MEMBER#<followee>", sk = "FOLLOWER#<follower>", fields(follower_name, since)),
    from_count = Member::FOLLOWING,
    to_count = Member::FOLLOWERS
)]
pub struct Follow {
    follower: String,
    followee: String,
    follower_name: String,
    since: u32,
    #[serde(default)]
    muted: bool,
}

/// `watcher` watches `watched` (notifications): one item per edge, its incoming side read
/// through gsi1; no counters.
#[derive(Entity, Edge, Serialize, Deserialize, Debug, Clone)]
#[entity(table = Social, pk = "MEMBER#<watcher>", sk = "WATCHES#<watched>")]
#[index(gsi1, pk = "WATCHED#<watched>", sk = "WATCHER#<watcher>")]
#[edge(from = watcher, to = watched, inverse(index = gsi1))]
pub struct Watch {
    watcher: String,
    watched: String,
    watcher_name: String,
}

/// A celebrity: its fan count is sharded, since every fan's link would write it.
#[derive(Entity, Serialize, Deserialize, Debug, Clone)]
#[entity(table = Social, pk = "CELEB#<id>", sk = "CELEB")]
pub struct Celebrity {
    id: String,
    #[serde(default)]
    fans: u64,
}

/// Shards of a celebrity's fan count.
const FAN_SHARDS: u16 = 16;

/// `fan` is a fan of `celebrity`: inverse items in the celebrity's partition, and the fan
/// count spread over 16 shard items in partitions of their own.
#[derive(Entity, Edge, Serialize, Deserialize, Debug, Clone)]
#[entity(table = Social, pk = "MEMBER#<fan>", sk = "FAN_OF#<celebrity>")]
#[edge(
    from = fan,
    to = celebrity,
    inverse(pk = "CELEB#<celebrity>", sk = "FAN#<fan>"),
    to_count(Celebrity::FANS, shards = 16)
)]
pub struct Fan {
    fan: String,
    celebrity: String,
}

/// Members `0..POPULAR` are followed more often than the others.
const POPULAR: usize = 20;
/// Watches per member: its first follows.
const WATCHES_EACH: usize = 3;
/// Edges of one `link_all` batch.
const BATCH: usize = 50;
/// Page size of the merges of two members' follows (small, so they take several pages).
const MERGE_PAGE: usize = 4;
/// Page size of the merge of two popular members' followers.
const SOURCES_PAGE: usize = 50;
/// The traversals' page size (the library's default).
const PAGE: usize = 100;
/// The fan-out of `also_linked` in the report.
const ALSO_FAN_OUT: usize = 20;
/// The fan-out of `recommend` (the library's default).
const RECOMMEND_FAN_OUT: usize = 50;
/// Most edges `remove_node` removes per transaction (`ddb_model::edge::MAX_CHUNK`).
const REMOVE_CHUNK: usize = ddb_model::edge::MAX_CHUNK;
/// Most actions of one TransactWriteItems.
const MAX_ACTIONS: usize = 100;

/// Member `n` (fixed width: key order is numeric order).
fn id(n: usize) -> String {
    format!("m{n:05}")
}

fn name(n: usize) -> String {
    format!("Member {n}")
}

fn member(id: String, name: String) -> Member {
    Member { id, name, following: 0, followers: 0 }
}

fn follow(a: &str, b: &str, name: &str) -> Follow {
    Follow {
        follower: a.into(),
        followee: b.into(),
        follower_name: name.into(),
        since: 2024,
        muted: false,
    }
}

/// A count the report checks came out otherwise: the report fails.
fn mismatch(what: String) -> Error {
    panic!("edge report: {what}")
}

fn kb(bytes: usize) -> String {
    format!("{:.0} KB", bytes as f64 / 1024.0)
}

/// A small deterministic generator: the same graph on every run.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, below: usize) -> usize {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((self.0 >> 33) % below as u64) as usize
    }
}

/// The generated follow graph, as the report's model of the table.
struct Graph {
    /// The follows in generation order, without duplicates.
    edges: Vec<(usize, usize)>,
    /// Each member's followees, sorted.
    out: Vec<Vec<usize>>,
    /// Each member's followers, sorted.
    inc: Vec<Vec<usize>>,
}

impl Graph {
    /// Every member follows `each` others, a quarter of the time one of the `POPULAR`
    /// first members; a third of the follows are followed back.
    fn generate(members: usize, each: usize) -> Graph {
        let mut rng = Lcg(42);
        let mut seen = HashSet::new();
        let mut edges = Vec::new();
        let mut add = |a: usize, b: usize, edges: &mut Vec<(usize, usize)>| {
            if a != b && seen.insert((a, b)) {
                edges.push((a, b));
            }
        };
        for n in 0..members {
            for _ in 0..each {
                let popular = rng.next(4) == 0;
                let other =
                    if popular { rng.next(POPULAR.min(members)) } else { rng.next(members) };
                add(n, other, &mut edges);
                if rng.next(3) == 0 {
                    add(other, n, &mut edges);
                }
            }
        }
        let mut out = vec![Vec::new(); members];
        let mut inc = vec![Vec::new(); members];
        for &(a, b) in &edges {
            out[a].push(b);
            inc[b].push(a);
        }
        for list in out.iter_mut().chain(inc.iter_mut()) {
            list.sort_unstable();
        }
        Graph { edges, out, inc }
    }

    fn len(&self) -> usize {
        self.out.len()
    }

    /// The neighbours of `n`: its followees (`forward`) or its followers.
    fn next(&self, n: usize, forward: bool) -> &[usize] {
        if forward { &self.out[n] } else { &self.inc[n] }
    }
}

/// Requests of a read of `d` edges in exact pages of `page`, up to `limit` edges: each
/// request asks for one item more than the page (the next page's first), except when the
/// items still wanted fit the page; one request when there are none.
fn exact_requests(d: usize, page: usize, limit: Option<usize>) -> u64 {
    let (mut loaded, mut remaining, mut requests) = (0, limit, 0);
    loop {
        if remaining == Some(0) {
            return requests;
        }
        let want = remaining.map_or(page, |r| r.min(page));
        let look_ahead = remaining.is_none_or(|r| r > page);
        requests += 1;
        let left = d - loaded;
        let (got, more) =
            if look_ahead { (left.min(want), left > want) } else { (left.min(want), left >= want) };
        loaded += got;
        if let Some(r) = remaining.as_mut() {
            *r -= got;
        }
        if !more {
            return requests;
        }
    }
}

/// `ceil(d / page)`, one for no edges: the requests of reading a whole list.
fn pages(d: usize, page: usize) -> u64 {
    d.div_ceil(page).max(1) as u64
}

/// The requests of a merge of two sorted lists read in pages of `page`, and the matches: a
/// side's next page is read when its buffer is empty; the merge ends as soon as one side is
/// exhausted (its last page read and consumed).
fn merge_requests(left: &[usize], right: &[usize], page: usize) -> (u64, usize) {
    struct Side<'a> {
        items: &'a [usize],
        pos: usize,
        loaded: usize,
        last_read: bool,
        done: bool,
    }
    let side = |items| Side { items, pos: 0, loaded: 0, last_read: false, done: false };
    let mut sides = [side(left), side(right)];
    let (mut requests, mut matches) = (0, 0);
    loop {
        for s in &mut sides {
            if s.pos == s.loaded && !s.done {
                if s.last_read {
                    s.done = true;
                } else {
                    requests += 1;
                    let take = page.min(s.items.len() - s.loaded);
                    s.loaded += take;
                    s.last_read = s.loaded == s.items.len();
                    s.done = take == 0;
                }
            }
        }
        let [l, r] = &mut sides;
        if l.pos < l.loaded && r.pos < r.loaded {
            match l.items[l.pos].cmp(&r.items[r.pos]) {
                Ordering::Less => l.pos += 1,
                Ordering::Greater => r.pos += 1,
                Ordering::Equal => {
                    l.pos += 1;
                    r.pos += 1;
                    matches += 1;
                }
            }
        } else if (l.pos == l.loaded && l.done) || (r.pos == r.loaded && r.done) {
            return (requests, matches);
        }
    }
}

/// True when both lists end with the same node: a merge then reads both to the end.
fn end_together(a: &[usize], b: &[usize]) -> bool {
    a.last().is_some() && a.last() == b.last()
}

/// The requests of a breadth-first neighbourhood of `hops` following edges forward (every
/// node of a level expanded, one exact read each), and the nodes reached.
fn neighbourhood_requests(g: &Graph, start: usize, hops: u32) -> (u64, usize, usize) {
    let mut seen = HashSet::from([start]);
    let mut frontier = vec![start];
    let (mut requests, mut reached, mut expanded) = (0, 0, 0);
    for _ in 0..hops {
        if frontier.is_empty() {
            break;
        }
        let mut next = Vec::new();
        for &n in &frontier {
            requests += pages(g.out[n].len(), PAGE);
            expanded += 1;
            next.extend(g.out[n].iter().copied().filter(|m| seen.insert(*m)));
        }
        reached += next.len();
        frontier = next;
    }
    (requests, reached, expanded)
}

/// What a bidirectional breadth-first search from `from` to `to` does: each round expands the
/// smaller frontier whole (the forward one on ties), and the search stops after the round in
/// which the two sides meet. The requests, the path length, and the nodes expanded forward
/// and backward.
fn shortest_path_requests(
    g: &Graph,
    from: usize,
    to: usize,
    max: u32,
) -> (u64, Option<u32>, [usize; 2]) {
    let mut seen: [HashMap<usize, u32>; 2] = [HashMap::from([(from, 0)]), HashMap::from([(to, 0)])];
    let mut frontier = [vec![from], vec![to]];
    let mut depth = [0u32; 2];
    let mut expanded = [0usize; 2];
    let mut requests = 0;
    while depth[0] + depth[1] < max {
        if frontier.iter().any(Vec::is_empty) {
            return (requests, None, expanded);
        }
        let i = usize::from(frontier[1].len() < frontier[0].len());
        depth[i] += 1;
        let mut next = Vec::new();
        let mut best: Option<u32> = None;
        for &n in &frontier[i] {
            let found = g.next(n, i == 0);
            requests += pages(found.len(), PAGE);
            expanded[i] += 1;
            for &m in found {
                if seen[i].contains_key(&m) {
                    continue;
                }
                seen[i].insert(m, depth[i]);
                if let Some(d) = seen[1 - i].get(&m) {
                    best = Some(best.map_or(depth[i] + d, |b| b.min(depth[i] + d)));
                }
                next.push(m);
            }
        }
        if best.is_some() {
            return (requests, best, expanded);
        }
        frontier[i] = next;
    }
    (requests, None, expanded)
}

/// Forward distances from `from`, breadth-first.
fn distances(g: &Graph, from: usize) -> Vec<Option<u32>> {
    let mut dist = vec![None; g.len()];
    dist[from] = Some(0);
    let mut frontier = vec![from];
    let mut d = 0;
    while !frontier.is_empty() {
        d += 1;
        let mut next = Vec::new();
        for &n in &frontier {
            for &m in &g.out[n] {
                if dist[m].is_none() {
                    dist[m] = Some(d);
                    next.push(m);
                }
            }
        }
        frontier = next;
    }
    dist
}

/// The requests of `also_linked(target).fan_out(f)`: the first `f` followers of the target in
/// one read, then the first `f` followees of each.
fn also_linked_requests(g: &Graph, target: usize, f: usize) -> u64 {
    let page = PAGE.max(f);
    let sources = &g.inc[target][..g.inc[target].len().min(f)];
    exact_requests(g.inc[target].len(), page, Some(f))
        + sources.iter().map(|&s| exact_requests(g.out[s].len(), page, Some(f))).sum::<u64>()
}

/// The requests of `recommend(source).fan_out(f)`: the first `f` followees of the source, the
/// first `f + 1` followers of each, and the first `f` followees of each of the first `f`
/// distinct other followers found. Also the number of followees and others read.
fn recommend_requests(g: &Graph, source: usize, f: usize) -> (u64, usize, usize) {
    let page = PAGE.max(f);
    let mine = &g.out[source][..g.out[source].len().min(f)];
    let mut requests = exact_requests(g.out[source].len(), page, Some(f));
    let mut seen = HashSet::new();
    let mut others = Vec::new();
    for &t in mine {
        requests += exact_requests(g.inc[t].len(), page, Some(f + 1));
        for &s in &g.inc[t][..g.inc[t].len().min(f + 1)] {
            if s != source && seen.insert(s) {
                others.push(s);
            }
        }
    }
    others.truncate(f);
    requests += others.iter().map(|&o| exact_requests(g.out[o].len(), page, Some(f))).sum::<u64>();
    (requests, mine.len(), others.len())
}

/// The transactions `link_all` sends for `edges` (endpoints given as any distinct labels): it
/// packs each next edge into the current transaction while its two items and the counter
/// updates of its endpoints not yet counted fit in 100 actions, up to 50 edges.
fn link_all_transactions(edges: &[(String, String)]) -> u64 {
    let (mut transactions, mut i) = (0, 0);
    while i < edges.len() {
        let (mut items, mut nodes, mut k) = (0, HashSet::new(), 0);
        while i < edges.len() && k < 50 {
            let (a, b) = &edges[i];
            let new = [a, b].iter().filter(|n| !nodes.contains(**n)).count();
            if items + 2 + nodes.len() + new > MAX_ACTIONS {
                break;
            }
            nodes.insert(a.clone());
            nodes.insert(b.clone());
            items += 2;
            k += 1;
            i += 1;
        }
        transactions += 1;
    }
    transactions
}

/// The requests of `remove_node` for a node with `d` edges in one direction: one read per
/// chunk and one more when the last chunk is full, one transaction per chunk.
fn removal_requests(d: usize) -> u64 {
    (d / REMOVE_CHUNK + 1 + d.div_ceil(REMOVE_CHUNK)) as u64
}

pub async fn section(scale: &Scale) -> Result<Section, Error> {
    let db = local::isolated_db::<Social>().await?;
    let db = &db;
    let follows = Follow::edges(db);
    let watches = Watch::edges(db);
    let g = &Graph::generate(scale.members, scale.follows_each);
    let n_members = g.len();

    // The graph: members, follows, and each member's first follows as watches.
    let members: Vec<Member> = (0..n_members).map(|n| member(id(n), name(n))).collect();
    db.batch_put(&members).await?;
    let all: Vec<Follow> = g.edges.iter().map(|&(a, b)| follow(&id(a), &id(b), &name(a))).collect();
    let loaded = follows.link_all(&all).await?;
    if loaded.created != all.len() {
        return Err(mismatch(format!("{} of {} follows created", loaded.created, all.len())));
    }
    let mut per_member = vec![0usize; n_members];
    let mut watch_in = vec![0usize; n_members];
    let mut watch_list = Vec::new();
    for &(a, b) in &g.edges {
        if per_member[a] < WATCHES_EACH {
            per_member[a] += 1;
            watch_in[b] += 1;
            watch_list.push(Watch { watcher: id(a), watched: id(b), watcher_name: name(a) });
        }
    }
    watches.link_all(&watch_list).await?;
    let watch_in = &watch_in;

    // Scratch members for the writes, linked only among themselves: the graph stays as
    // generated until the last row.
    let runs_one = scale.single_runs as usize;
    let runs_many = scale.many_runs as usize;
    let pair = |i: u32| (format!("s{i:05}a"), format!("s{i:05}b"));
    let hub = |i: u32| format!("h{i:05}");
    let target = |j: usize| format!("t{j:05}");
    let mut scratch: Vec<Member> = Vec::new();
    for i in 0..scale.single_runs {
        let (a, b) = pair(i);
        scratch.push(member(a.clone(), a));
        scratch.push(member(b.clone(), b));
    }
    scratch.extend((0..scale.many_runs).map(|i| member(hub(i), hub(i))));
    scratch.extend((0..BATCH).map(|j| member(target(j), target(j))));
    db.batch_put(&scratch).await?;

    let items: Vec<Item> = db.scan_items().all().await?;
    let table_bytes: usize = items.iter().map(item_size).sum();
    let max_out = g.out.iter().map(Vec::len).max().unwrap_or(0);
    let max_in = g.inc.iter().map(Vec::len).max().unwrap_or(0);

    let mut s = Section::new(
        "Graph edges",
        format!(
            "One table with one GSI. {n_members} members; each picks {} members to follow \
             (itself and repeats skipped), a quarter of the time one of the first {POPULAR} \
             (popular) members, and a third of the follows are followed back: {} follows (`Follow`: an inverse item in the \
             followee's partition with the follower's name and date copied, and both \
             members' counters), at most {max_out} per follower and {max_in} per followee. \
             Each member's first {WATCHES_EACH} follows are also watches (`Watch`: one item \
             per edge, incoming side through gsi1, no counters): {} watches. Writes act on \
             {} scratch members linked only among themselves. The table holds {} items, {}. \
             Single-edge operations run {} times, the others {} times; numbers are per call. \
             The expected counts of merges, traversals and removals are computed from the \
             generated edges.",
            scale.follows_each,
            g.edges.len(),
            watch_list.len(),
            scratch.len(),
            items.len(),
            kb(table_bytes),
            scale.single_runs,
            scale.many_runs,
        ),
    );
    let (one, many) = (scale.single_runs, scale.many_runs);

    // ---------------------------------------------------------------------------------------
    // Writes
    // ---------------------------------------------------------------------------------------
    let m = measure(db, one, |i| async move {
        let (a, b) = pair(i);
        if !follows.link(&follow(&a, &b, &a)).await?.is_new() {
            return Err(mismatch(format!("{a} -> {b} existed")));
        }
        Ok(0)
    })
    .await?;
    s.push(m.row(
        "link (new)",
        "follows.link(&follow)",
        1,
        "One TransactWriteItems of 4 actions: the forward item (condition: absent), the \
         inverse item, and both members' counters (ADD, condition: the member exists), with an \
         idempotency token.",
    ));

    let m = measure(db, one, |i| async move {
        let (a, b) = pair(i);
        if follows.link(&follow(&a, &b, &a)).await?.is_new() {
            return Err(mismatch(format!("{a} -> {b} was created twice")));
        }
        Ok(0)
    })
    .await?;
    s.push(m.row(
        "link (existing: idempotent)",
        "follows.link(&follow) -> Linked::Existing",
        1,
        "The same transaction, canceled by the forward item's condition: nothing changes \
         (counters included), and the cancellation reason returns the stored item, so \
         `Existing` is told apart from another entity type's item without a read.",
    ));

    let m = measure(db, one, |i| async move {
        let (a, b) = pair(i);
        follows.update(a.as_str(), b.as_str()).set(Follow::SINCE, 2025u32).await?;
        Ok(0)
    })
    .await?;
    s.push(m.row(
        "update of an edge (both sides)",
        "follows.update(a, b).set(Follow::SINCE, y)",
        1,
        "One TransactWriteItems: an UpdateItem of the forward item and one of the inverse \
         item (`since` is copied there; a field that is not copied updates the forward \
         item only).",
    ));

    let m = measure(db, one, |i| async move {
        let (a, b) = pair(i);
        if !follows.unlink(a.as_str(), b.as_str()).await?.was_linked() {
            return Err(mismatch(format!("{a} -> {b} was not linked")));
        }
        Ok(0)
    })
    .await?;
    s.push(m.row(
        "unlink",
        "follows.unlink(a, b)",
        1,
        "One TransactWriteItems: both items deleted (the forward one on condition it exists) \
         and both counters decremented.",
    ));

    let m = measure(db, one, |i| async move {
        let (a, b) = pair(i);
        if follows.unlink(a.as_str(), b.as_str()).await?.was_linked() {
            return Err(mismatch(format!("{a} -> {b} was still linked")));
        }
        Ok(0)
    })
    .await?;
    s.push(m.row(
        "unlink (absent: idempotent)",
        "follows.unlink(a, b) -> Unlinked::Absent",
        1,
        "The same transaction, canceled by the forward item's condition: nothing changes.",
    ));

    let m = measure(db, one, |i| async move {
        let (a, b) = pair(i);
        let watch = Watch { watcher: a.clone(), watched: b, watcher_name: a };
        watches.link(&watch).await?;
        Ok(0)
    })
    .await?;
    s.push(m.row(
        "link (index-inverted edge)",
        "watches.link(&watch)",
        1,
        "One item and no counters: one PutItem (condition: absent); the index writes the \
         incoming side.",
    ));

    let batch_edges: Vec<(String, String)> =
        (0..BATCH).map(|j| ("hub".to_owned(), target(j))).collect();
    let batch_tx = link_all_transactions(&batch_edges);
    let batch_actions = 2 * BATCH + BATCH + 1;
    let batch_min = batch_actions.div_ceil(MAX_ACTIONS) as u64;
    let m = measure(db, many, |i| async move {
        let edges: Vec<Follow> = (0..BATCH).map(|j| follow(&hub(i), &target(j), &hub(i))).collect();
        let report = follows.link_all(&edges).await?;
        if report.created != BATCH {
            return Err(mismatch(format!("link_all created {}", report.created)));
        }
        Ok(0)
    })
    .await?;
    let why = format!(
        "{BATCH} new follows of one member: {BATCH} forward and {BATCH} inverse items, \
         {BATCH} followee counters and the follower's, {batch_actions} actions; a \
         TransactWriteItems holds at most 100: ⌈{batch_actions} / 100⌉ = {batch_min} \
         (BatchWriteItem cannot check conditions or add to counters). ddb-model packs {} \
         edges per transaction ({} actions): {batch_tx} requests.",
        (MAX_ACTIONS - 1) / 3,
        (MAX_ACTIONS - 1) / 3 * 3 + 1,
    );
    s.push(m.row_over(
        &format!("link_all, {BATCH} follows of one member"),
        "follows.link_all(&edges)",
        batch_min,
        batch_tx,
        &why,
    ));

    // ---------------------------------------------------------------------------------------
    // Single edges and counters
    // ---------------------------------------------------------------------------------------
    let edge_at = |i: u32| g.edges[(i as usize * 7919) % g.edges.len()];
    let m = measure(db, one, |i| async move {
        let (a, b) = edge_at(i);
        Ok(follows.get(id(a).as_str(), id(b).as_str()).await?.map_or(0, |_| 1))
    })
    .await?;
    s.push(m.row(
        "get an edge",
        "follows.get(a, b)",
        1,
        "One consistent GetItem of the forward item.",
    ));

    let m = measure(db, one, |i| async move {
        let (a, b) = edge_at(i);
        if !follows.exists(id(a).as_str(), id(b).as_str()).await? {
            return Err(mismatch(format!("{a} -> {b} not found")));
        }
        Ok(1)
    })
    .await?;
    s.push(m.row(
        "exists (linked)",
        "follows.exists(a, b)",
        1,
        "One consistent GetItem projecting the key and the entity type.",
    ));

    let non_edges: &[(usize, usize)] = &(0..n_members)
        .flat_map(|a| (0..n_members).map(move |b| (a, (a + b * 7 + 1) % n_members)))
        .filter(|&(a, b)| a != b && g.out[a].binary_search(&b).is_err())
        .take(runs_one)
        .collect::<Vec<_>>();
    let m = measure(db, one, |i| async move {
        let (a, b) = non_edges[i as usize % non_edges.len()];
        if follows.exists(id(a).as_str(), id(b).as_str()).await? {
            return Err(mismatch(format!("{a} -> {b} found")));
        }
        Ok(0)
    })
    .await?;
    s.push(m.row(
        "exists (not linked)",
        "follows.exists(a, b)",
        1,
        "As above: one GetItem answers.",
    ));

    let m = measure(db, one, |i| async move {
        let n = i as usize % n_members;
        let d = follows.out_degree(id(n).as_str()).await?;
        if d != g.out[n].len() as u64 {
            return Err(mismatch(format!("out-degree of {n}: {d}, not {}", g.out[n].len())));
        }
        Ok(d as usize)
    })
    .await?;
    s.push(m.row(
        "out-degree (counter; items per call = the degree)",
        "follows.out_degree(m)",
        1,
        "The counter on the member item: one consistent GetItem projecting it.",
    ));

    let m = measure(db, one, |i| async move {
        let n = i as usize % n_members;
        let d = follows.in_degree(id(n).as_str()).await?;
        if d != g.inc[n].len() as u64 {
            return Err(mismatch(format!("in-degree of {n}: {d}, not {}", g.inc[n].len())));
        }
        Ok(d as usize)
    })
    .await?;
    s.push(m.row(
        "in-degree (counter)",
        "follows.in_degree(m)",
        1,
        "The other counter of the member item: one GetItem (reading both degrees is one \
         `Member::get`).",
    ));

    let star = (0..n_members).max_by_key(|&n| (g.inc[n].len(), std::cmp::Reverse(n))).unwrap_or(0);
    let m = measure(db, many, |_| async move {
        let d = watches.in_degree(id(star).as_str()).await?;
        if d != watch_in[star] as u64 {
            return Err(mismatch(format!("watchers of {star}: {d}, not {}", watch_in[star])));
        }
        Ok(d as usize)
    })
    .await?;
    s.push(m.row(
        "in-degree without a counter (index count)",
        "watches.in_degree(m)",
        1,
        &format!(
            "No counter: one Query of the index with `Select = COUNT` (the {} watchers of \
             the most followed member take far less than 1 MB).",
            watch_in[star]
        ),
    ));

    // ---------------------------------------------------------------------------------------
    // Lists
    // ---------------------------------------------------------------------------------------
    // The member who follows the most others.
    let busiest =
        (0..n_members).max_by_key(|&n| (g.out[n].len(), std::cmp::Reverse(n))).unwrap_or(0);
    let (busiest_id, busiest_out) = (&id(busiest), g.out[busiest].len());
    let m = measure(db, many, |_| async move {
        let got = follows.outgoing(busiest_id.as_str()).all().await?;
        if got.len() != busiest_out {
            return Err(mismatch(format!("{} follows of {busiest}, not {busiest_out}", got.len())));
        }
        Ok(got.len())
    })
    .await?;
    s.push(m.row(
        "outgoing: every follow of a member",
        "follows.outgoing(m).all()",
        1,
        &format!(
            "One Query of the member's partition (`FOLLOWS#` prefix): the {busiest_out} \
             follows of the member who follows the most are far under 1 MB."
        ),
    ));

    let k = 10usize;
    let m = measure(db, many, |_| async move {
        Ok(follows.outgoing(busiest_id.as_str()).limit(k).page(None).await?.items.len())
    })
    .await?;
    s.push(m.row(
        &format!("outgoing: first page of {k}"),
        &format!("follows.outgoing(m).limit({k}).page(None)"),
        1,
        "One Query with `Limit`; the cursor of the next page comes with it.",
    ));

    let star_id = &id(star);
    let k = 50usize;
    let m = measure(db, many, |_| async move {
        let page = follows.incoming(star_id.as_str()).limit(k).page(None).await?;
        if page.items.iter().any(|f| f.follower_name != name_of(&f.follower)) {
            return Err(mismatch("a follower's name is wrong".into()));
        }
        Ok(page.items.len())
    })
    .await?;
    s.push(m.row(
        &format!("incoming: first {k} followers with their names (inverse items)"),
        &format!("follows.incoming(m).limit({k}).page(None)"),
        1,
        &format!(
            "One Query of the inverse items in the followee's partition (the most followed \
             member, {} followers); each carries the follower's name, so no read per \
             follower.",
            g.inc[star].len()
        ),
    ));

    let m = measure(db, many, |_| async move {
        let page = follows.incoming(star_id.as_str()).limit(k).page(None).await?;
        let keys = page.items.iter().map(|f| Member::key(f.follower.as_str()));
        let found: Vec<Member> = db.batch_get(keys).await?.into_iter().flatten().collect();
        Ok(found.len())
    })
    .await?;
    let naive_keys = g.inc[star].len().min(k);
    let naive = 1 + naive_keys.div_ceil(100) as u64;
    s.push(m.row_over(
        &format!("incoming: first {k} followers, names read from their members (naive)"),
        &format!("follows.incoming(m).limit({k}) + db.batch_get(members)"),
        1,
        naive,
        &format!(
            "Without the copied name a followers page needs their member items too: one \
             Query and ⌈{naive_keys} / 100⌉ BatchGetItem. Copying the name onto the inverse item \
             (row above) saves the BatchGetItem."
        ),
    ));

    let k = 50usize;
    let m = measure(db, many, |_| async move {
        Ok(watches.incoming(star_id.as_str()).limit(k).page(None).await?.items.len())
    })
    .await?;
    s.push(m.row(
        &format!("incoming through the index: first {k} watchers"),
        &format!("watches.incoming(m).limit({k}).page(None)"),
        1,
        &format!(
            "One Query of gsi1 (the most followed member has {} watchers); the edge items \
             themselves are read, eventually consistent.",
            watch_in[star]
        ),
    ));

    // ---------------------------------------------------------------------------------------
    // Merges
    // ---------------------------------------------------------------------------------------
    // The member the merge and traversal rows start at: a non-popular member with more
    // follows and followers than a merge page, whose last follow (in key order) is mutual.
    let me = (POPULAR..n_members)
        .find(|&n| {
            let (out, inc) = (&g.out[n], &g.inc[n]);
            out.len() > MERGE_PAGE && inc.len() > MERGE_PAGE && end_together(out, inc)
        })
        .ok_or_else(|| mismatch("no member for the merge rows".into()))?;
    let me_id = &id(me);
    let (n_out, n_in) = (g.out[me].len(), g.inc[me].len());
    let merge_why = |what: &str, left: &[usize], right: &[usize], p: usize, requests: u64| {
        let (n, m) = (left.len(), right.len());
        let bound = pages(n, p) + pages(m, p);
        if requests == bound && end_together(left, right) {
            format!(
                "{what}: n = {n} and m = {m} edges in pages of {p}. Both lists come sorted by \
                 the other member and are merged in one pass; their last items match, so any \
                 merge reads both to the end: ⌈{n}/{p}⌉ + ⌈{m}/{p}⌉ = {bound} Queries (exact \
                 pages: no empty request after a full last page)."
            )
        } else {
            format!(
                "{what}: n = {n} and m = {m} edges in pages of {p}, merged in one pass that \
                 reads a page of a list when it has used the previous one and stops when a \
                 list is exhausted: {requests} of the ⌈{n}/{p}⌉ + ⌈{m}/{p}⌉ = {bound} pages."
            )
        }
    };
    let (mutual_req, mutual_n) = merge_requests(&g.out[me], &g.inc[me], MERGE_PAGE);
    let m = measure(db, many, |_| async move {
        let found = follows.mutual(me_id.as_str()).page_size(MERGE_PAGE as u32).all().await?;
        if found.len() != mutual_n {
            return Err(mismatch(format!("{} mutual, not {mutual_n}", found.len())));
        }
        Ok(found.len())
    })
    .await?;
    s.push(m.row(
        &format!("mutual follows (n = {n_out}, m = {n_in}, page {MERGE_PAGE})"),
        &format!("follows.mutual(m).page_size({MERGE_PAGE})"),
        mutual_req,
        &merge_why(
            "A member's follows and followers",
            &g.out[me],
            &g.inc[me],
            MERGE_PAGE,
            mutual_req,
        ),
    ));

    // Another member whose last follow is the same.
    let other = (POPULAR..n_members)
        .find(|&o| o != me && g.out[o].len() > MERGE_PAGE && end_together(&g.out[me], &g.out[o]))
        .unwrap_or((me + 1) % n_members);
    let other_id = &id(other);
    let (targets_req, targets_n) = merge_requests(&g.out[me], &g.out[other], MERGE_PAGE);
    let m = measure(db, many, |_| async move {
        let found = follows
            .common_targets(me_id.as_str(), other_id.as_str())
            .page_size(MERGE_PAGE as u32)
            .ids()
            .await?;
        if found.len() != targets_n {
            return Err(mismatch(format!("{} common targets, not {targets_n}", found.len())));
        }
        Ok(found.len())
    })
    .await?;
    let o_out = g.out[other].len();
    s.push(m.row(
        &format!("common follows of two members (n = {n_out}, m = {o_out}, page {MERGE_PAGE})"),
        &format!("follows.common_targets(a, b).page_size({MERGE_PAGE})"),
        targets_req,
        &merge_why("Two members' follows", &g.out[me], &g.out[other], MERGE_PAGE, targets_req),
    ));

    // Two popular members whose followers' lists end with the same member, if any.
    let popular = POPULAR.min(n_members);
    let popular_pairs: Vec<(usize, usize)> =
        (0..popular).flat_map(|a| (a + 1..popular).map(move |b| (a, b))).collect();
    let (pa, pb) = popular_pairs
        .iter()
        .find(|&&(a, b)| end_together(&g.inc[a], &g.inc[b]))
        .or(popular_pairs.first())
        .copied()
        .ok_or_else(|| mismatch("fewer than two popular members".into()))?;
    let (pa_id, pb_id) = (&id(pa), &id(pb));
    let (sources_req, sources_n) = merge_requests(&g.inc[pa], &g.inc[pb], SOURCES_PAGE);
    let m = measure(db, many, |_| async move {
        let found = follows
            .common_sources(pa_id.as_str(), pb_id.as_str())
            .page_size(SOURCES_PAGE as u32)
            .ids()
            .await?;
        if found.len() != sources_n {
            return Err(mismatch(format!("{} common sources, not {sources_n}", found.len())));
        }
        Ok(found.len())
    })
    .await?;
    let (a_in, b_in) = (g.inc[pa].len(), g.inc[pb].len());
    s.push(m.row(
        &format!(
            "common followers of two popular members (n = {a_in}, m = {b_in}, page {SOURCES_PAGE})"
        ),
        &format!("follows.common_sources(a, b).page_size({SOURCES_PAGE})"),
        sources_req,
        &merge_why(
            "Two popular members' followers",
            &g.inc[pa],
            &g.inc[pb],
            SOURCES_PAGE,
            sources_req,
        ),
    ));

    // ---------------------------------------------------------------------------------------
    // Traversals
    // ---------------------------------------------------------------------------------------
    let (hood_req, hood_n, hood_expanded) = neighbourhood_requests(g, me, 2);
    let m = measure(db, many, |_| async move {
        let reached = follows.neighbourhood(me_id.as_str(), 2).await?;
        if reached.nodes.len() != hood_n || reached.requests != hood_req {
            return Err(mismatch(format!(
                "neighbourhood: {} nodes in {} requests, not {hood_n} in {hood_req}",
                reached.nodes.len(),
                reached.requests
            )));
        }
        Ok(reached.nodes.len())
    })
    .await?;
    s.push(m.row(
        "neighbourhood, 2 hops",
        "follows.neighbourhood(m, 2)",
        hood_req,
        &format!(
            "Breadth-first: the member and its {} followees are expanded (the nodes 2 hops \
             away need not be), one Query of each one's partition, in pages of {PAGE}: \
             {hood_req} requests for {hood_expanded} nodes. A Query reads one partition and \
             BatchGetItem needs whole keys, so no request reads the edges of several members.",
            n_out
        ),
    ));

    let dist = distances(g, me);
    let max_depth = 6u32;
    let far = (0..n_members)
        .filter_map(|n| dist[n].filter(|d| *d <= max_depth).map(|d| (d, n)))
        .max_by_key(|&(d, n)| (d, std::cmp::Reverse(n)))
        .map_or(me, |(_, n)| n);
    let far_id = &id(far);
    let (path_req, path_len, path_expanded) = shortest_path_requests(g, me, far, max_depth);
    // A search from one side expands every node closer than the target.
    let far_d = dist[far].unwrap_or(0);
    let one_sided: u64 = (0..n_members)
        .filter(|&n| dist[n].is_some_and(|d| d < far_d))
        .map(|n| pages(g.out[n].len(), PAGE))
        .sum();
    let m = measure(db, many, |_| async move {
        let path = follows.shortest_path(me_id.as_str(), far_id.as_str()).await?;
        let len = path.as_ref().map(|p| p.len() as u32 - 1);
        if len != path_len {
            return Err(mismatch(format!("path of {len:?} edges, not {path_len:?}")));
        }
        Ok(path.map_or(0, |p| p.len()))
    })
    .await?;
    s.push(m.row(
        &format!("shortest path ({} edges)", path_len.unwrap_or(0)),
        "follows.shortest_path(a, b)",
        path_req,
        &format!(
            "From the member to the farthest member it reaches ({} follows away). \
             Bidirectional breadth-first search, expanding the smaller frontier each round: \
             {} nodes forward (their follows) and {} backward (their followers), one Query \
             each in pages of {PAGE}, {path_req} requests. A search from one side only would \
             expand every node closer than the target: {one_sided} requests.",
            path_len.unwrap_or(0),
            path_expanded[0],
            path_expanded[1],
        ),
    ));

    let also_req = also_linked_requests(g, star, ALSO_FAN_OUT);
    let also_read = g.inc[star].len().min(ALSO_FAN_OUT);
    let m = measure(db, many, |_| async move {
        Ok(follows.also_linked(star_id.as_str()).fan_out(ALSO_FAN_OUT).await?.len())
    })
    .await?;
    s.push(m.row(
        &format!("also followed (fan-out {ALSO_FAN_OUT})"),
        &format!("follows.also_linked(m).fan_out({ALSO_FAN_OUT})"),
        also_req,
        &format!(
            "One Query of {also_read} followers of the most followed member, then one Query \
             of each one's follows (up to {ALSO_FAN_OUT}): {also_req} requests."
        ),
    ));

    let (rec_req, rec_mine, rec_others) = recommend_requests(g, me, RECOMMEND_FAN_OUT);
    let m =
        measure(db, many, |_| async move { Ok(follows.recommend(me_id.as_str()).await?.len()) })
            .await?;
    s.push(m.row(
        &format!("recommend (fan-out {RECOMMEND_FAN_OUT})"),
        "follows.recommend(m)",
        rec_req,
        &format!(
            "Collaborative filtering, one Query per partition read, each within one page: the \
             member's follows ({rec_mine}), the followers of each ({rec_mine} Queries), and \
             the follows of the first {rec_others} other followers found ({rec_others} \
             Queries): {rec_req} requests."
        ),
    ));

    // ---------------------------------------------------------------------------------------
    // Node removal (last: it changes the graph)
    // ---------------------------------------------------------------------------------------
    // Members with fewer than a chunk of edges each way, removed one after the other: each
    // removal is counted on the edges left by the ones before.
    let mut out: Vec<BTreeSet<usize>> = g.out.iter().map(|l| l.iter().copied().collect()).collect();
    let mut inc: Vec<BTreeSet<usize>> = g.inc.iter().map(|l| l.iter().copied().collect()).collect();
    let mut removed: Vec<(usize, usize, usize)> = Vec::new();
    let mut counts: Option<(u64, u64)> = None;
    for n in POPULAR..n_members {
        if removed.len() == runs_many {
            break;
        }
        let (d_out, d_in) = (out[n].len(), inc[n].len());
        let others: HashSet<usize> = out[n].iter().chain(&inc[n]).copied().collect();
        let actions = 2 * (d_out + d_in) + others.len() + 1;
        let min = 1 + actions.div_ceil(MAX_ACTIONS) as u64;
        // And the removal's fence record: one PutItem before, one DeleteItem after.
        let expected = removal_requests(d_out) + removal_requests(d_in) + 2;
        let fits = (1..REMOVE_CHUNK).contains(&d_out) && (1..REMOVE_CHUNK).contains(&d_in);
        if !fits || counts.is_some_and(|c| c != (min, expected)) {
            continue;
        }
        counts = Some((min, expected));
        removed.push((n, d_out, d_in));
        for m in std::mem::take(&mut out[n]) {
            inc[m].remove(&n);
        }
        for m in std::mem::take(&mut inc[n]) {
            out[m].remove(&n);
        }
    }
    let (remove_min, remove_expected) =
        counts.ok_or_else(|| mismatch("no member to remove".into()))?;
    if removed.len() < runs_many {
        return Err(mismatch(format!("{} members to remove, not {runs_many}", removed.len())));
    }
    let removed = &removed;
    let m = measure(db, many, |i| async move {
        let (n, d_out, d_in) = removed[i as usize];
        let r = follows.remove_node(id(n).as_str()).await?;
        if (r.outgoing, r.incoming, r.done) != (d_out, d_in, true) {
            return Err(mismatch(format!("removal of {n}: {r:?}, not {d_out} and {d_in}")));
        }
        Ok(0)
    })
    .await?;
    let sizes: Vec<String> = removed.iter().map(|(_, o, i)| format!("{o}+{i}")).collect();
    s.push(m.row_over(
        "remove a member's follows and followers",
        "follows.remove_node(m)",
        remove_min,
        remove_expected,
        &format!(
            "The members removed have fewer than {REMOVE_CHUNK} edges each way ({} follows + \
             followers). Their partition holds both their follows (`FOLLOWS#`) and the inverse \
             items of their followers (`FOLLOWER#`), so one Query can read every edge, and one \
             TransactWriteItems removes them: 2 items per edge, a counter per other member and \
             the member's own, at most 100 actions here: {remove_min}. ddb-model sends \
             {remove_expected}: it removes each direction on its own (one Query, one \
             transaction), because in general incoming edges live elsewhere (another \
             partition, an index), and writes and deletes a fence record (PutItem, \
             DeleteItem) that each transaction checks, so that a removal taken over by \
             another (run again from another process) cannot land a late chunk. Until this \
             report it also read each direction once more after a chunk shorter than asked \
             for, to find nothing; it no longer does.",
            sizes.join(", ")
        ),
    ));

    // ---------------------------------------------------------------------------------------
    // Sharded counters: the follow rows above, with the followee's count spread over shards
    // ---------------------------------------------------------------------------------------
    let fans = Fan::edges(db);
    Celebrity { id: "star".into(), fans: 0 }.create(db).await?;
    let m = measure(db, one, |i| async move {
        let (a, _) = pair(i);
        if !fans.link(&Fan { fan: a.clone(), celebrity: "star".into() }).await?.is_new() {
            return Err(mismatch(format!("{a} was a fan already")));
        }
        Ok(0)
    })
    .await?;
    s.push(m.row(
        "link (new), sharded count",
        "fans.link(&fan) with to_count(Celebrity::FANS, shards = 16)",
        1,
        "One TransactWriteItems of 3 actions: the forward and inverse items and an ADD to the \
         one shard item the fan's id hashes to (`CELEB#star#SHARD#<n>`, a partition of its \
         own, created by its first ADD). No check of the celebrity item: it would put every \
         link back on the one hot item. As many requests as the unsharded link: sharding \
         spreads the write, it does not add one.",
    ));
    let m = measure(db, one, |_| async move {
        let d = fans.in_degree("star").await?;
        if d != u64::from(one) {
            return Err(mismatch(format!("the star has {d} fans, not {one}")));
        }
        Ok(d as usize)
    })
    .await?;
    s.push(m.row(
        "in-degree (sharded counter)",
        "fans.in_degree(c)",
        1,
        &format!(
            "One consistent BatchGetItem of {} keys: the celebrity item (its own counter is \
             the base, kept when an unsharded counter is sharded) and its {FAN_SHARDS} shard \
             items, summed. The unsharded counter is one GetItem of 1 item (1 read unit); \
             this reads {} items (up to {} read units: each item is rounded up to 4 KB \
             separately). A Query cannot read them in one request, since each shard has a \
             partition of its own.",
            FAN_SHARDS + 1,
            FAN_SHARDS + 1,
            FAN_SHARDS + 1
        ),
    ));
    let m = measure(db, one, |i| async move {
        let (a, _) = pair(i);
        if !fans.unlink(a.as_str(), "star").await?.was_linked() {
            return Err(mismatch(format!("{a} was not a fan")));
        }
        Ok(0)
    })
    .await?;
    s.push(m.row(
        "unlink, sharded count",
        "fans.unlink(f, c)",
        1,
        "One TransactWriteItems: both items deleted and an ADD of -1 to the shard the link \
         moved (the same hash), so no shard goes below zero.",
    ));

    Ok(s)
}

/// The name of member `id` (`m00042` -> `Member 42`).
fn name_of(id: &str) -> String {
    id.strip_prefix('m').and_then(|n| n.parse::<usize>().ok()).map_or_else(String::new, name)
}
