//! Sharded degree counters (`to_count(Node::FIELD, shards = n)`): a popular node's count
//! spread over shard items in partitions of their own, moved in the link's transaction,
//! read by one `BatchGetItem`; exact under concurrent writers, never negative, and
//! compatible with the counter of the node item it replaces.

use std::collections::{BTreeMap, BTreeSet};

use ddb_model::prelude::*;
use ddb_model::{Edge, Item, Op};
use serde::{Deserialize, Serialize};

use crate::support::{self, raw, s};

#[derive(Table)]
#[table(name = "shards")]
pub struct Social;

/// Shards of the followers counter in the tests.
const SHARDS: u16 = 8;

/// The models before the counter was sharded: the same entity names, an unsharded counter.
mod before {
    use super::Social;
    use ddb_model::{Edge, Entity};
    use serde::{Deserialize, Serialize};

    #[derive(Entity, Serialize, Deserialize, Debug, Clone)]
    #[entity(table = Social, pk = "USER#<id>", sk = "PROFILE")]
    pub struct User {
        pub id: String,
        #[serde(default)]
        pub following: u64,
        #[serde(default)]
        pub followers: u64,
    }

    #[derive(Entity, Edge, Serialize, Deserialize, Debug, Clone)]
    #[entity(table = Social, pk = "USER#<follower>", sk = "FOLLOWS#<followee>")]
    #[edge(
        from = follower,
        to = followee,
        inverse(pk = "USER#<followee>", sk = "FOLLOWER#<follower>"),
        from_count = User::FOLLOWING,
        to_count = User::FOLLOWERS
    )]
    pub struct Follow {
        pub follower: String,
        pub followee: String,
    }
}

/// A user: `following` stays on the profile, `followers` is sharded 8 ways.
#[derive(Entity, Serialize, Deserialize, Debug, Clone)]
#[entity(table = Social, pk = "USER#<id>", sk = "PROFILE")]
pub struct User {
    pub id: String,
    #[serde(default)]
    pub following: u64,
    #[serde(default)]
    pub followers: u64,
}

impl User {
    fn new(id: &str) -> User {
        User { id: id.into(), following: 0, followers: 0 }
    }
}

#[derive(Entity, Edge, Serialize, Deserialize, Debug, Clone)]
#[entity(table = Social, pk = "USER#<follower>", sk = "FOLLOWS#<followee>")]
#[edge(
    from = follower,
    to = followee,
    inverse(pk = "USER#<followee>", sk = "FOLLOWER#<follower>"),
    from_count = User::FOLLOWING,
    to_count(User::FOLLOWERS, shards = 8)
)]
pub struct Follow {
    pub follower: String,
    pub followee: String,
}

fn follow(a: &str, b: &str) -> Follow {
    Follow { follower: a.into(), followee: b.into() }
}

/// A post liked by users: a one-directional edge whose only counter is sharded.
#[derive(Entity, Serialize, Deserialize, Debug, Clone)]
#[entity(table = Social, pk = "POST#<id>", sk = "POST")]
pub struct Post {
    pub id: u32,
    #[serde(default)]
    pub likes: u64,
}

#[derive(Entity, Edge, Serialize, Deserialize, Debug, Clone)]
#[entity(table = Social, pk = "POST#<post>", sk = "LIKE#<user>")]
#[edge(from = post, to = user, inverse = none, from_count(Post::LIKES, shards = 4))]
pub struct Like {
    pub post: u32,
    pub user: String,
}

/// Undirected links with a sharded counter on both ends.
#[derive(Entity, Serialize, Deserialize, Debug, Clone)]
#[entity(table = Social, pk = "HUB#<id>", sk = "HUB")]
pub struct Hub {
    pub id: u32,
    #[serde(default)]
    pub links: u64,
}

#[derive(Entity, Edge, Serialize, Deserialize, Debug, Clone)]
#[entity(table = Social, pk = "HUB#<a>", sk = "PEER#<b>")]
#[edge(from = a, to = b, symmetric, count(Hub::LINKS, shards = 3))]
pub struct Peer {
    pub a: u32,
    pub b: u32,
}

fn number(item: &Item, attr: &str) -> i64 {
    item.get(attr).and_then(|v| v.as_n().ok()).map_or(0, |n| n.parse().expect("a number"))
}

/// The stored `followers` of each shard of `id` (0 for an absent shard item), checking the
/// shard items' entity type.
async fn shard_values(db: &Db<Social>, pk: &str, sk: &str, attr: &str, n: u16) -> Vec<i64> {
    let mut out = Vec::new();
    for shard in 0..n {
        let item = raw(db, &format!("{pk}#SHARD#{shard}"), sk).await;
        if let Some(item) = &item {
            let expected = format!("{}~shard", pk.split('#').next().map_or("", entity_of));
            assert_eq!(item.get("_type"), Some(&s(&expected)), "{item:?}");
        }
        out.push(item.as_ref().map_or(0, |i| number(i, attr)));
    }
    out
}

fn entity_of(prefix: &str) -> &'static str {
    match prefix {
        "USER" => "User",
        "POST" => "Post",
        _ => "Hub",
    }
}

async fn follower_shards(db: &Db<Social>, id: &str) -> Vec<i64> {
    shard_values(db, User::key(id).pk(), "PROFILE", "followers", SHARDS).await
}

#[tokio::test]
async fn a_follow_moves_one_shard_and_a_count_reads_them_all_in_one_request() -> Result<(), Error> {
    let db = support::db::<Social>().await;
    User::new("star").create(&db).await?;
    let fans: Vec<String> = (0..40).map(|i| format!("fan{i}")).collect();
    for fan in &fans {
        User::new(fan).create(&db).await?;
    }
    let follows = Follow::edges(&db);
    db.reset_requests();
    assert!(follows.link(&follow("fan0", "star")).await?.is_new());
    // The forward and inverse items, the follower's counter and one shard: one request.
    assert_eq!(db.requests().get(Op::TransactWriteItems), 1);
    assert_eq!(db.requests().total(), 1);
    for fan in &fans[1..] {
        follows.link(&follow(fan, "star")).await?;
    }
    // Linking again changes nothing, shards included.
    assert!(!follows.link(&follow("fan3", "star")).await?.is_new());

    db.reset_requests();
    assert_eq!(follows.in_degree("star").await?, 40);
    assert_eq!(db.requests().get(Op::BatchGetItem), 1);
    assert_eq!(db.requests().total(), 1);
    db.reset_requests();
    assert_eq!(follows.out_degree("fan7").await?, 1);
    assert_eq!(db.requests().get(Op::GetItem), 1, "an unsharded counter is one GetItem");

    // The followers spread over the shards, each in a partition of its own; the profile's
    // own counter (the base) is untouched.
    let shards = follower_shards(&db, "star").await;
    assert_eq!(shards.iter().sum::<i64>(), 40);
    assert!(shards.iter().all(|&n| n >= 0), "{shards:?}");
    assert!(shards.iter().filter(|&&n| n > 0).count() >= 4, "spread: {shards:?}");
    let star = User::get(&db, "star").await?.expect("star");
    assert_eq!((star.followers, star.following), (0, 0));

    // An unlink moves the shard its link moved.
    let before = follower_shards(&db, "star").await;
    assert!(follows.unlink("fan5", "star").await?.was_linked());
    let after = follower_shards(&db, "star").await;
    let moved: Vec<usize> = (0..before.len()).filter(|&i| before[i] != after[i]).collect();
    assert_eq!(moved.len(), 1);
    assert_eq!(before[moved[0]] - 1, after[moved[0]]);
    assert!(!follows.unlink("fan5", "star").await?.was_linked());
    assert_eq!(follows.in_degree("star").await?, 39);
    assert_eq!(follows.incoming("star").count().await?, 39);
    Ok(())
}

#[tokio::test]
async fn many_concurrent_follows_and_unfollows_of_one_node_agree_with_the_edges()
-> Result<(), Error> {
    let db = support::db::<Social>().await;
    User::new("star").create(&db).await?;
    const TASKS: usize = 16;
    const ROUNDS: usize = 12;
    for t in 0..TASKS {
        for f in 0..3 {
            User::new(&format!("t{t}f{f}")).create(&db).await?;
        }
    }
    let mut tasks = Vec::new();
    for t in 0..TASKS {
        let db = db.clone();
        tasks.push(tokio::spawn(async move {
            let follows = Follow::edges(&db);
            for round in 0..ROUNDS {
                let fan = format!("t{t}f{}", (t + round) % 3);
                if (t + round) % 4 == 3 {
                    follows.unlink(fan.as_str(), "star").await?;
                } else {
                    follows.link(&follow(&fan, "star")).await?;
                }
            }
            Ok::<_, Error>(())
        }));
    }
    for task in tasks {
        task.await.expect("task")?;
    }
    let follows = Follow::edges(&db);
    let edges = follows.incoming("star").consistent().count().await?;
    assert!(edges > 0);
    assert_eq!(follows.in_degree("star").await?, edges as u64);
    let shards = follower_shards(&db, "star").await;
    assert!(shards.iter().all(|&n| n >= 0), "{shards:?}");
    assert_eq!(shards.iter().sum::<i64>(), edges as i64);
    // Every follower's unsharded counter agrees with its own edges too.
    for t in 0..TASKS {
        for f in 0..3 {
            let fan = format!("t{t}f{f}");
            let linked = u64::from(follows.exists(fan.as_str(), "star").await?);
            assert_eq!(User::get(&db, fan.as_str()).await?.map(|u| u.following), Some(linked));
        }
    }
    println!("after {TASKS} x {ROUNDS} concurrent writes: {edges} edges, {}", db.requests());
    Ok(())
}

#[tokio::test]
async fn sharding_an_existing_counter_keeps_its_count_as_the_base() -> Result<(), Error> {
    let db = support::db::<Social>().await;
    // Before: five followers counted on the profile.
    before::User { id: "star".into(), following: 0, followers: 0 }.create(&db).await?;
    let old = before::Follow::edges(&db);
    for i in 0..5 {
        before::User { id: format!("old{i}"), following: 0, followers: 0 }.create(&db).await?;
        old.link(&before::Follow { follower: format!("old{i}"), followee: "star".into() }).await?;
    }
    assert_eq!(old.in_degree("star").await?, 5);

    // After: the same items read through the sharded declaration.
    let follows = Follow::edges(&db);
    assert_eq!(follows.in_degree("star").await?, 5, "the profile's counter is the base");
    for i in 0..3 {
        User::new(&format!("new{i}")).create(&db).await?;
        follows.link(&follow(&format!("new{i}"), "star")).await?;
    }
    assert_eq!(follows.in_degree("star").await?, 8);
    // Unfollows of edges counted in the base move a shard down: a shard may go below zero,
    // the sum stays exact.
    for i in 0..5 {
        assert!(follows.unlink(format!("old{i}").as_str(), "star").await?.was_linked());
    }
    assert_eq!(follows.in_degree("star").await?, 3);
    assert_eq!(User::get(&db, "star").await?.map(|u| u.followers), Some(5), "base untouched");
    assert_eq!(follower_shards(&db, "star").await.iter().sum::<i64>(), -2);
    for i in 0..3 {
        follows.unlink(format!("new{i}").as_str(), "star").await?;
    }
    assert_eq!(follows.in_degree("star").await?, 0);
    assert_eq!(follows.incoming("star").count().await?, 0);
    Ok(())
}

#[tokio::test]
async fn a_sharded_counter_needs_no_node_item_and_refuses_foreign_items() -> Result<(), Error> {
    let db = support::db::<Social>().await;
    let likes = Like::edges(&db);
    // No post item: the likes are counted on the shards alone.
    for user in ["ann", "bob", "cy"] {
        likes.link(&Like { post: 1, user: user.into() }).await?;
    }
    assert_eq!(likes.out_degree(1u32).await?, 3);
    Post { id: 1, likes: 0 }.create(&db).await?;
    assert_eq!(likes.out_degree(1u32).await?, 3);
    assert_eq!(Post::get(&db, 1u32).await?.map(|p| p.likes), Some(0));
    assert_eq!(likes.out_degree(2u32).await?, 0, "no post, no likes");

    // An item of another entity type under a shard key: the link is refused, nothing moves.
    let post2 = Post::key(2u32).pk().to_owned();
    let shards: Vec<Item> = {
        let mut found = Vec::new();
        for n in 0..4 {
            let mut item = Item::new();
            item.insert("pk".into(), s(&format!("{post2}#SHARD#{n}")));
            item.insert("sk".into(), s("POST"));
            item.insert("_type".into(), s("Other"));
            found.push(item);
        }
        found
    };
    for item in shards {
        support::put_raw(&db, item).await;
    }
    let before = support::snapshot(&db).await;
    let err = likes.link(&Like { post: 2, user: "ann".into() }).await.unwrap_err();
    let failed = err.failed_action().expect("failed action");
    assert!(
        matches!(
            failed.reason.condition_error(),
            Some(Error::WrongEntityType { expected: "Post", found: Some(f), .. }) if f == "Other"
        ),
        "{err}"
    );
    assert_eq!(support::snapshot(&db).await, before);
    let err = likes.out_degree(2u32).await.unwrap_err();
    assert!(matches!(err, Error::WrongEntityType { expected: "Post", .. }), "{err}");

    // The node item of another type is refused by a count too.
    let mut item = Item::new();
    item.insert("pk".into(), s(Post::key(3u32).pk()));
    item.insert("sk".into(), s("POST"));
    item.insert("_type".into(), s("Other"));
    support::put_raw(&db, item).await;
    let err = likes.out_degree(3u32).await.unwrap_err();
    assert!(matches!(err, Error::WrongEntityType { expected: "Post", .. }), "{err}");
    Ok(())
}

#[tokio::test]
async fn a_node_key_whose_shard_keys_are_too_long_is_refused_before_sending() -> Result<(), Error> {
    let db = support::db::<Social>().await;
    let follows = Follow::edges(&db);
    // "USER#" + id fits 2048 bytes, "USER#<id>#SHARD#7" does not.
    let id = "x".repeat(2048 - 5 - 2);
    User::new("ann").create(&db).await?;
    User::new(&id).create(&db).await?;
    let before = support::snapshot(&db).await;
    db.reset_requests();
    let err = follows.link(&follow("ann", &id)).await.unwrap_err();
    assert!(matches!(err, Error::InvalidKey { .. }), "{err}");
    assert_eq!(db.requests().total(), 0);
    assert!(follows.in_degree(id.as_str()).await.is_err());
    assert_eq!(db.requests().total(), 0);
    assert_eq!(support::snapshot(&db).await, before);
    Ok(())
}

#[tokio::test]
async fn bulk_links_symmetric_edges_and_node_removal_keep_sharded_counts() -> Result<(), Error> {
    let db = support::db::<Social>().await;
    User::new("star").create(&db).await?;
    let fans: Vec<String> = (0..60).map(|i| format!("fan{i}")).collect();
    for fan in &fans {
        User::new(fan).create(&db).await?;
    }
    let follows = Follow::edges(&db);
    let edges: Vec<Follow> = fans.iter().map(|f| follow(f, "star")).collect();
    let report = follows.link_all(&edges).await?;
    assert_eq!((report.created, report.existing), (60, 0));
    assert_eq!(follows.in_degree("star").await?, 60);

    // Removing the star's edges: 24 edges per transaction when a counter is sharded.
    assert_eq!(ddb_model::edge::MAX_SHARDED_CHUNK, 24);
    db.reset_requests();
    let removed = follows.remove_node("star").await?;
    assert_eq!(removed.incoming, 60);
    assert_eq!(db.requests().get(Op::TransactWriteItems), 3);
    assert_eq!(follows.in_degree("star").await?, 0);
    assert!(follower_shards(&db, "star").await.iter().all(|&n| n == 0));
    assert_eq!(follows.out_degree("fan9").await?, 0);

    // Symmetric: a link counts on both hubs, a self-loop once.
    let peers = Peer::edges(&db);
    for b in 1..=5 {
        peers.link(&Peer { a: 0, b }).await?;
    }
    peers.link(&Peer { a: 0, b: 0 }).await?;
    assert_eq!(peers.out_degree(0u32).await?, 6);
    assert_eq!(peers.in_degree(3u32).await?, 1);
    let hub0 = shard_values(&db, Hub::key(0u32).pk(), "HUB", "links", 3).await;
    assert_eq!(hub0.iter().sum::<i64>(), 6);
    peers.unlink(3u32, 0u32).await?;
    peers.unlink(0u32, 0u32).await?;
    assert_eq!(peers.out_degree(0u32).await?, 4);
    assert_eq!(peers.out_degree(3u32).await?, 0);
    Ok(())
}

mod props {
    use super::*;
    use proptest::prelude::*;

    #[derive(Debug, Clone)]
    enum Write {
        Link(usize, usize),
        Unlink(usize, usize),
        Remove(usize),
    }

    /// Node ids from all of Unicode, separators and the escape character included.
    fn ids() -> impl Strategy<Value = Vec<String>> {
        prop::collection::btree_set(
            prop_oneof![
                "[#%/|~:a-c]{0,4}",
                any::<String>().prop_map(|s| s.chars().take(6).collect::<String>()),
            ],
            3..5,
        )
        .prop_map(|set| set.into_iter().collect())
    }

    fn writes(nodes: usize) -> impl Strategy<Value = Vec<Write>> {
        let write = prop_oneof![
            5 => (0..nodes, 0..nodes).prop_map(|(a, b)| Write::Link(a, b)),
            3 => (0..nodes, 0..nodes).prop_map(|(a, b)| Write::Unlink(a, b)),
            1 => (0..nodes).prop_map(Write::Remove),
        ];
        prop::collection::vec(write, 1..20)
    }

    fn run<F: std::future::Future<Output = Result<(), Error>>>(f: F) -> Result<(), Error> {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build();
        runtime.expect("runtime").block_on(f)
    }

    async fn check(ids: Vec<String>, writes: Vec<Write>) -> Result<(), Error> {
        let db = support::db::<Social>().await;
        for id in &ids {
            User::new(id).create(&db).await?;
        }
        let follows = Follow::edges(&db);
        let mut model: BTreeSet<(usize, usize)> = BTreeSet::new();
        for w in writes {
            match w {
                Write::Link(a, b) => {
                    let new = follows.link(&follow(&ids[a], &ids[b])).await?.is_new();
                    assert_eq!(new, model.insert((a, b)));
                }
                Write::Unlink(a, b) => {
                    let was = follows.unlink(ids[a].as_str(), ids[b].as_str()).await?;
                    assert_eq!(was.was_linked(), model.remove(&(a, b)));
                }
                Write::Remove(n) => {
                    follows.remove_node(ids[n].as_str()).await?;
                    model.retain(|(a, b)| *a != n && *b != n);
                }
            }
        }
        let mut inbound: BTreeMap<usize, u64> = BTreeMap::new();
        let mut outbound: BTreeMap<usize, u64> = BTreeMap::new();
        for (a, b) in &model {
            *outbound.entry(*a).or_default() += 1;
            *inbound.entry(*b).or_default() += 1;
        }
        for (n, id) in ids.iter().enumerate() {
            let expected_in = inbound.get(&n).copied().unwrap_or(0);
            assert_eq!(follows.in_degree(id.as_str()).await?, expected_in, "in of {id:?}");
            let expected_out = outbound.get(&n).copied().unwrap_or(0);
            assert_eq!(follows.out_degree(id.as_str()).await?, expected_out, "out of {id:?}");
            let shards = follower_shards(&db, id).await;
            assert!(shards.iter().all(|&v| v >= 0), "{id:?}: {shards:?}");
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 12, failure_persistence: None, ..ProptestConfig::default() })]

        #[test]
        fn prop_sharded_counts_agree_with_a_model(
            (ids, writes) in ids().prop_flat_map(|ids| {
                let n = ids.len();
                (Just(ids), writes(n))
            })
        ) {
            run(check(ids, writes)).expect("graph writes");
        }
    }
}
