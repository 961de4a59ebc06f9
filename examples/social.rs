//! A social network on graph edges (an adjacency-list graph): members follow each other; a follow is stored
//! from both sides (the follower's "following" list and the followee's "followers" list) with
//! both members' counters, in one transaction. On a generated graph of a few thousand
//! follows, prints follows, followers, mutual follows, a 2-hop neighbourhood, a shortest
//! path and "members who follow X also follow", each with the requests it sent. Then
//! members like a post: a one-directional edge (`inverse = none`) whose marker and the
//! post's like counter are written in one transaction. Last, a celebrity's subscribers:
//! a counter spread over 16 shard items in partitions of their own, so a burst of concurrent
//! subscriptions does not queue on one hot item, read back in one request.
//!
//!     cargo run --example social
//!
//! Runs against the embedded DynamoDB-compatible engine; set `DDB_ENDPOINT` to use another
//! endpoint (AWS's DynamoDB Local, for example).

use std::collections::BTreeMap;

use ddb_model::edge::Direction;
use ddb_model::prelude::*;
use ddb_model::{Edge, RequestStats, local};
use futures_util::{StreamExt, TryStreamExt, stream};
use serde::{Deserialize, Serialize};

/// A member, with the counters the follows keep.
#[derive(Entity, Serialize, Deserialize, Debug, Clone)]
#[entity(pk = "MEMBER#<id>", sk = "PROFILE")]
struct Member {
    id: String,
    name: String,
    #[serde(default)]
    following: u64,
    #[serde(default)]
    followers: u64,
    /// The base of the sharded subscriber count (0 unless the counter existed unsharded).
    #[serde(default)]
    subscribers: u64,
}

/// `follower` follows `followee`. The inverse item, in the followee's partition, carries the
/// follower's name, so a followers list needs no lookup per follower.
#[derive(Entity, Edge, Serialize, Deserialize, Debug, Clone)]
#[entity(pk = "MEMBER#<follower>", sk = "FOLLOWS#<followee>")]
#[edge(
    from = follower,
    to = followee,
    inverse(pk = "MEMBER#<followee>", sk = "FOLLOWER#<follower>", fields(follower_name)),
    from_count = Member::FOLLOWING,
    to_count = Member::FOLLOWERS
)]
struct Follow {
    follower: String,
    followee: String,
    follower_name: String,
    #[serde(default)]
    muted: bool,
}

/// `fan` subscribes to `star`. A star's subscriber count is sharded: each subscription adds
/// to one of 16 shard items (chosen by hashing the fan), each in a partition of its own.
#[derive(Entity, Edge, Serialize, Deserialize, Debug, Clone)]
#[entity(pk = "MEMBER#<fan>", sk = "SUBSCRIBES#<star>")]
#[edge(
    from = fan,
    to = star,
    inverse(pk = "MEMBER#<star>", sk = "SUBSCRIBER#<fan>"),
    to_count(Member::SUBSCRIBERS, shards = 16)
)]
struct Subscribe {
    fan: String,
    star: String,
}

/// A post, with the counter its likes keep.
#[derive(Entity, Serialize, Deserialize, Debug, Clone)]
#[entity(pk = "POST#<id>", sk = "POST")]
struct Post {
    id: u32,
    author: String,
    #[serde(default)]
    likes: u64,
}

/// `member` likes `post`: a marker in the post's partition (its likers are the post's
/// outgoing edges) and the post's counter. Nothing is stored in the member's partition, so
/// "the posts a member liked" is not a read of this edge: it does not compile.
#[derive(Entity, Edge, Serialize, Deserialize, Debug, Clone)]
#[entity(pk = "POST#<post>", sk = "LIKE#<member>")]
#[edge(from = post, to = member, inverse = none, from_count = Post::LIKES)]
struct Like {
    post: u32,
    member: String,
}

const MEMBERS: u64 = 400;
const FOLLOWS_EACH: u64 = 5;

fn id(n: u64) -> String {
    format!("m{n:03}")
}

/// A small deterministic generator: the same graph on every run.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, below: u64) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 33) % below
    }
}

fn show(title: &str, requests: RequestStats) {
    println!("\n{title}  [{requests}]");
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    let db: Db = local::isolated_db().await?;
    let follows = Follow::edges(&db);

    // The graph: every member follows a few others, more often the low-numbered ones (so a
    // few are popular), and some follow back.
    let mut rng = Lcg(42);
    let mut edges = Vec::new();
    for n in 0..MEMBERS {
        for _ in 0..FOLLOWS_EACH {
            let popular = rng.next(4) == 0;
            let other = if popular { rng.next(20) } else { rng.next(MEMBERS) };
            if other != n {
                edges.push((n, other));
                if rng.next(3) == 0 {
                    edges.push((other, n));
                }
            }
        }
    }
    stream::iter(0..MEMBERS)
        .map(|n| {
            let db = &db;
            async move {
                let member = Member {
                    id: id(n),
                    name: format!("Member {n}"),
                    following: 0,
                    followers: 0,
                    subscribers: 0,
                };
                member.create(db).await
            }
        })
        .buffer_unordered(16)
        .try_collect::<Vec<()>>()
        .await?;
    db.reset_requests();
    let all: Vec<Follow> = edges
        .iter()
        .map(|&(a, b)| Follow {
            follower: id(a),
            followee: id(b),
            follower_name: format!("Member {a}"),
            muted: false,
        })
        .collect();
    let report = follows.link_all(&all).await?;
    show(
        &format!(
            "linked {} follows among {MEMBERS} members: {} new, {} already there, {} transactions of many follows",
            all.len(),
            report.created,
            report.existing,
            report.transactions
        ),
        db.requests(),
    );

    // One follow more: one request, both sides and both counters.
    let before = db.requests();
    let linked = follows
        .link(&Follow {
            follower: id(42),
            followee: id(7),
            follower_name: "Member 42".into(),
            muted: false,
        })
        .await?;
    show(&format!("m042 follows m007 ({linked:?})"), db.requests() - before);

    let me = id(42);
    let before = db.requests();
    let page = follows.outgoing(me.as_str()).limit(10).page(None).await?;
    show(&format!("{me} follows (first page of 10)"), db.requests() - before);
    println!("  {}", page.items.iter().map(|f| f.followee.as_str()).collect::<Vec<_>>().join(" "));

    let before = db.requests();
    let followers = follows.incoming(me.as_str()).limit(8).page(None).await?;
    show(
        &format!("followers of {me} (first page of 8, names from the inverse items)"),
        db.requests() - before,
    );
    for f in &followers.items {
        println!("  {} ({})", f.follower, f.follower_name);
    }

    let before = db.requests();
    let (out, inc) =
        (follows.out_degree(me.as_str()).await?, follows.in_degree(me.as_str()).await?);
    show(&format!("{me}: following {out}, followers {inc} (the counters)"), db.requests() - before);

    let before = db.requests();
    let mutual = follows.mutual(me.as_str()).page_size(25).ids().await?;
    let spent = db.requests() - before;
    show(
        &format!(
            "{me} and these {} follow each other (a merge; bound ceil({out}/25) + ceil({inc}/25) = {})",
            mutual.len(),
            out.div_ceil(25).max(1) + inc.div_ceil(25).max(1)
        ),
        spent,
    );
    println!("  {}", mutual.join(" "));

    let before = db.requests();
    let reached = follows.neighbourhood(me.as_str(), 2).concurrency(8).budget(200).await?;
    let mut per_hop: BTreeMap<u32, usize> = BTreeMap::new();
    for (_, hops) in &reached.nodes {
        *per_hop.entry(*hops).or_default() += 1;
    }
    show(
        &format!(
            "members within 2 follows of {me} ({} requests counted by the traversal)",
            reached.requests
        ),
        db.requests() - before,
    );
    for (hops, n) in per_hop {
        println!("  {n} at {hops} hop(s)");
    }

    let (a, b) = (id(7), id(355));
    let before = db.requests();
    let path = follows.shortest_path(a.as_str(), b.as_str()).max_depth(6).budget(300).await?;
    show(&format!("shortest follow path from {a} to {b}"), db.requests() - before);
    match path {
        Some(path) => println!("  {}", path.join(" -> ")),
        None => println!("  (none within 6 follows)"),
    }
    let before = db.requests();
    let undirected = follows
        .shortest_path(b.as_str(), a.as_str())
        .direction(Direction::Both)
        .max_depth(6)
        .budget(300)
        .await?;
    show(&format!("and from {b} to {a}, ignoring direction"), db.requests() - before);
    println!("  {}", undirected.map_or("(none)".to_owned(), |p| p.join(" - ")));

    let popular = id(3);
    let before = db.requests();
    let also = follows.also_linked(popular.as_str()).fan_out(20).top(5).await?;
    show(
        &format!("members who follow {popular} also follow (20 of its followers read)"),
        db.requests() - before,
    );
    for (member, n) in also {
        println!("  {member}: {n}");
    }

    let before = db.requests();
    let removed = follows.remove_node(me.as_str()).await?;
    show(
        &format!(
            "{me} leaves: {} follows and {} followers removed in {} transactions",
            removed.outgoing, removed.incoming, removed.transactions
        ),
        db.requests() - before,
    );
    let stats: Vec<u64> = stream::iter(mutual.iter().take(3))
        .then(|m| async move { follows.in_degree(m.as_str()).await })
        .try_collect()
        .await?;
    println!(
        "  followers of {} now: {stats:?}",
        mutual.iter().take(3).cloned().collect::<Vec<_>>().join(", ")
    );

    // Likes: a marker and the post's counter, one transaction per like.
    Post { id: 1, author: id(3), likes: 0 }.create(&db).await?;
    let likes = Like::edges(&db);
    let before = db.requests();
    for n in 10..20 {
        likes.link(&Like { post: 1, member: id(n) }).await?;
    }
    show("10 members like post 1 (marker and counter together)", db.requests() - before);
    let before = db.requests();
    let again = likes.link(&Like { post: 1, member: id(10) }).await?;
    show(&format!("m010 likes it again: {again:?}, nothing changes"), db.requests() - before);
    let before = db.requests();
    let err = likes.link_new(&Like { post: 1, member: id(11) }).await.err();
    show(
        &format!(
            "m011 likes it again, asking for a new like: {}",
            err.map_or_else(|| "created?".to_owned(), |e| e.to_string())
        ),
        db.requests() - before,
    );
    let before = db.requests();
    likes.unlink(1u32, id(12).as_str()).await?;
    let count = likes.out_degree(1u32).await?;
    let first: Vec<String> =
        likes.outgoing(1u32).limit(3).all().await?.into_iter().map(|l| l.member).collect();
    show(
        &format!("m012 takes the like back: post 1 has {count} likes; first likers {first:?}"),
        db.requests() - before,
    );

    // A celebrity: 300 members subscribe at once, 32 at a time. Each subscription is one
    // transaction writing both items and one shard; the count is one BatchGetItem of the
    // star's item and its 16 shards, exact under concurrency.
    let star = id(0);
    let subs = Subscribe::edges(&db);
    let before = db.requests();
    let linked: Vec<_> = stream::iter(1..=300u64)
        .map(|n| {
            let (subs, star) = (&subs, star.as_str());
            async move { subs.link(&Subscribe { fan: id(n), star: star.to_owned() }).await }
        })
        .buffer_unordered(32)
        .try_collect()
        .await?;
    show(
        &format!("{} members subscribe to {star} concurrently (sharded counter)", linked.len()),
        db.requests() - before,
    );
    let before = db.requests();
    let count = subs.in_degree(star.as_str()).await?;
    show(&format!("{star} has {count} subscribers (16 shards summed)"), db.requests() - before);
    let before = db.requests();
    subs.unlink(id(7).as_str(), star.as_str()).await?;
    let count = subs.in_degree(star.as_str()).await?;
    show(&format!("m007 unsubscribes: {count} subscribers"), db.requests() - before);
    println!("\nrequests in all: {}", db.requests());
    Ok(())
}
