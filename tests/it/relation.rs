//! One-directional relations (`#[edge(.., inverse = none)]`): a marker item and the counters
//! of its endpoints in one transaction, idempotent relinks, duplicates reported when asked
//! (`link_new`), unlinks, concurrent likers, lost responses, and a model-checked sequence of
//! writes with arbitrary Unicode node names.

use std::collections::BTreeSet;

use ddb_model::edge::{Linked, Unlinked};
use ddb_model::prelude::*;
use ddb_model::testing::{Faults, Harness};
use ddb_model::{Edge, Op, Table};
use serde::{Deserialize, Serialize};

use crate::support::{self, n, raw, s};

#[derive(Table)]
#[table(name = "relations")]
pub struct Rel;

/// A post, whose `likes` counter moves with every like.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = Rel, pk = "POST#<id>", sk = "POST")]
pub struct Post {
    pub id: String,
    pub title: String,
    #[serde(default)]
    pub likes: u64,
}

/// A user, counting the repositories they starred.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = Rel, pk = "USER#<id>", sk = "PROFILE")]
pub struct User {
    pub id: String,
    #[serde(default)]
    pub starred: u64,
}

/// A repository with its star count (a signed counter, absent on items written before it).
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = Rel, pk = "REPO#<name>", sk = "REPO")]
pub struct Repo {
    pub name: String,
    #[serde(default)]
    pub stars: i64,
}

/// A like, stored in the post's partition (its likers are the post's outgoing edges); the
/// post's counter is the `from` endpoint's.
#[derive(Entity, Edge, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = Rel, pk = "POST#<post>", sk = "LIKE#<user>")]
#[edge(from = post, to = user, inverse = none, from_count = Post::LIKES)]
pub struct Like {
    pub post: String,
    pub user: String,
    pub at: u32,
}

impl Like {
    fn new(post: &str, user: &str) -> Like {
        Like { post: post.into(), user: user.into(), at: 1 }
    }
}

/// A star, stored in the user's partition: both endpoints count.
#[derive(Entity, Edge, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = Rel, pk = "USER#<user>", sk = "STAR#<repo>")]
#[edge(
    from = user,
    to = repo,
    inverse = none,
    from_count = User::STARRED,
    to_count = Repo::STARS
)]
pub struct Star {
    pub user: String,
    pub repo: String,
}

/// A reaction on an issue: a marker without counters.
#[derive(Entity, Edge, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = Rel, pk = "ISSUE#<issue>", sk = "REACTION#<user>")]
#[edge(from = issue, to = user, inverse = none)]
pub struct Reaction {
    pub issue: u64,
    pub user: String,
    pub emoji: String,
}

async fn post(db: &Db<Rel>, id: &str) -> Result<(), Error> {
    Post { id: id.into(), title: format!("Post {id}"), likes: 0 }.create(db).await
}

async fn likes_of(db: &Db<Rel>, id: &str) -> u64 {
    Post::get(db, id).await.expect("read post").expect("post exists").likes
}

/// The likers of a post as stored (the markers), sorted.
async fn likers(db: &Db<Rel>, id: &str) -> Vec<String> {
    let likes = Like::edges(db).outgoing(id).consistent().all().await.expect("likers");
    likes.into_iter().map(|l| l.user).collect()
}

#[tokio::test]
async fn a_like_writes_its_marker_and_the_counter_in_one_request() -> Result<(), Error> {
    let db = support::db::<Rel>().await;
    post(&db, "p1").await?;
    let likes = Like::edges(&db);
    db.reset_requests();
    assert_eq!(likes.link(&Like::new("p1", "ann")).await?, Linked::Created);
    let requests = db.requests();
    assert_eq!(requests.total(), 1, "{requests}");
    assert_eq!(requests.get(Op::TransactWriteItems), 1);

    let marker = raw(&db, "POST#p1", "LIKE#ann").await.expect("marker item");
    assert_eq!(marker["_type"], s("Like"));
    assert_eq!(marker["user"], s("ann"));
    assert_eq!(marker["at"], n(1));
    // Nothing else was written: the post and the marker are the table.
    assert_eq!(support::snapshot(&db).await.len(), 2);
    assert_eq!(likes_of(&db, "p1").await, 1);

    db.reset_requests();
    assert!(likes.exists("p1", "ann").await?);
    assert!(!likes.exists("p1", "bob").await?);
    assert_eq!(likes.out_degree("p1").await?, 1, "read from the counter");
    assert_eq!(db.requests().get(Op::GetItem), 3);
    assert_eq!(db.requests().total(), 3);
    Ok(())
}

#[tokio::test]
async fn liking_again_changes_nothing_counters_included() -> Result<(), Error> {
    let db = support::db::<Rel>().await;
    post(&db, "p1").await?;
    let likes = Like::edges(&db);
    likes.link(&Like::new("p1", "ann")).await?;
    let before = support::snapshot(&db).await;
    db.reset_requests();
    let again = Like { at: 99, ..Like::new("p1", "ann") };
    let linked = likes.link(&again).await?;
    assert!(!linked.is_new());
    assert_eq!(db.requests().total(), 1, "one (canceled) transaction");
    assert_eq!(support::snapshot(&db).await, before, "nothing changed");
    assert_eq!(likes.get("p1", "ann").await?.map(|l| l.at), Some(1));
    Ok(())
}

#[tokio::test]
async fn a_duplicate_like_is_an_error_when_asked_and_writes_nothing() -> Result<(), Error> {
    let db = support::db::<Rel>().await;
    post(&db, "p1").await?;
    let likes = Like::edges(&db);
    db.reset_requests();
    likes.link_new(&Like::new("p1", "ann")).await?;
    assert_eq!(db.requests().get(Op::TransactWriteItems), 1);
    assert_eq!(likes_of(&db, "p1").await, 1);

    let before = support::snapshot(&db).await;
    db.reset_requests();
    let err = likes.link_new(&Like { at: 7, ..Like::new("p1", "ann") }).await.unwrap_err();
    assert!(err.is_already_exists(), "{err}");
    assert!(!err.is_not_found() && !err.is_transaction_conflict(), "{err}");
    assert_eq!(db.requests().total(), 1, "one canceled transaction, no retry");
    match &err {
        Error::AlreadyExists { entity, key, current } => {
            assert_eq!(*entity, "Like");
            assert_eq!(key, "(\"POST#p1\", \"LIKE#ann\")");
            assert_eq!(current.get("at"), Some(&n(1)), "the stored like, not the new one");
        }
        other => panic!("not AlreadyExists: {other:?}"),
    }
    assert_eq!(support::snapshot(&db).await, before, "nothing written");
    assert_eq!(likes_of(&db, "p1").await, 1, "counter unchanged");

    // Another user's like is new.
    likes.link_new(&Like::new("p1", "bob")).await?;
    assert_eq!(likes_of(&db, "p1").await, 2);
    Ok(())
}

#[tokio::test]
async fn a_duplicate_marker_without_counters_is_one_put_and_an_error_when_asked()
-> Result<(), Error> {
    let db = support::db::<Rel>().await;
    let reactions = Reaction::edges(&db);
    let thumbs = Reaction { issue: 42, user: "ann".into(), emoji: "👍".into() };
    db.reset_requests();
    assert!(reactions.link(&thumbs).await?.is_new());
    assert_eq!(db.requests().get(Op::PutItem), 1);
    assert_eq!(db.requests().total(), 1);
    let before = support::snapshot(&db).await;
    let heart = Reaction { emoji: "❤".into(), ..thumbs.clone() };
    assert_eq!(reactions.link(&heart).await?, Linked::Existing);
    let err = reactions.link_new(&heart).await.unwrap_err();
    assert!(err.is_already_exists(), "{err}");
    assert_eq!(err.current_item().and_then(|i| i.get("emoji")), Some(&s("👍")));
    assert_eq!(support::snapshot(&db).await, before);

    // Properties update as for the other kinds of edge: one request.
    db.reset_requests();
    reactions.update(42u64, "ann").set(Reaction::EMOJI, "🎉".to_string()).await?;
    assert_eq!(db.requests().total(), 1);
    assert_eq!(reactions.get(42u64, "ann").await?.map(|r| r.emoji), Some("🎉".to_string()));
    let missing = reactions.update(42u64, "bob").set(Reaction::EMOJI, "x".to_string()).await;
    assert!(missing.unwrap_err().is_not_found());
    assert_eq!(reactions.out_degree(42u64).await?, 1, "a count query without a counter");
    Ok(())
}

#[tokio::test]
async fn unlink_moves_the_counter_back_and_a_missing_like_changes_nothing() -> Result<(), Error> {
    let db = support::db::<Rel>().await;
    post(&db, "p1").await?;
    let likes = Like::edges(&db);
    for user in ["ann", "bob", "cy"] {
        likes.link(&Like::new("p1", user)).await?;
    }
    db.reset_requests();
    assert_eq!(likes.unlink("p1", "bob").await?, Unlinked::Removed);
    assert_eq!(db.requests().total(), 1);
    assert_eq!(db.requests().get(Op::TransactWriteItems), 1);
    assert!(raw(&db, "POST#p1", "LIKE#bob").await.is_none());
    assert_eq!(likes_of(&db, "p1").await, 2);
    assert_eq!(likers(&db, "p1").await, ["ann", "cy"]);

    let before = support::snapshot(&db).await;
    assert_eq!(likes.unlink("p1", "bob").await?, Unlinked::Absent);
    assert_eq!(likes.unlink("p1", "nobody").await?, Unlinked::Absent);
    assert_eq!(likes.unlink("p2", "ann").await?, Unlinked::Absent, "no such post either");
    assert_eq!(support::snapshot(&db).await, before);

    // A like again after an unlink counts again.
    assert!(likes.link_new(&Like::new("p1", "bob")).await.is_ok());
    assert_eq!(likes_of(&db, "p1").await, 3);
    Ok(())
}

#[tokio::test]
async fn a_like_of_a_missing_post_fails_and_writes_nothing() -> Result<(), Error> {
    let db = support::db::<Rel>().await;
    let before = support::snapshot(&db).await;
    for unique in [false, true] {
        let likes = Like::edges(&db);
        let like = Like::new("ghost", "ann");
        let err = if unique {
            likes.link_new(&like).await.unwrap_err()
        } else {
            likes.link(&like).await.unwrap_err()
        };
        assert!(err.is_not_found(), "{err}");
        assert!(!err.is_already_exists());
        let failed = err.failed_action().expect("a failed action");
        assert_eq!(failed.entity, "Post");
        assert_eq!(failed.key, "(\"POST#ghost\", \"POST\")");
    }
    assert_eq!(support::snapshot(&db).await, before);

    // Unlinking from a post deleted since skips its counter.
    post(&db, "p1").await?;
    Like::edges(&db).link(&Like::new("p1", "ann")).await?;
    Post::delete(&db, "p1").await?;
    assert_eq!(Like::edges(&db).unlink("p1", "ann").await?, Unlinked::Removed);
    assert!(support::snapshot(&db).await.is_empty());
    Ok(())
}

#[tokio::test]
async fn both_endpoints_may_count() -> Result<(), Error> {
    let db = support::db::<Rel>().await;
    for id in ["ann", "bob"] {
        User { id: id.into(), starred: 0 }.create(&db).await?;
    }
    for name in ["ddb", "serde"] {
        Repo { name: name.into(), stars: 0 }.create(&db).await?;
    }
    let stars = Star::edges(&db);
    db.reset_requests();
    stars.link(&Star { user: "ann".into(), repo: "ddb".into() }).await?;
    assert_eq!(db.requests().total(), 1, "marker and both counters: one transaction");
    stars.link(&Star { user: "ann".into(), repo: "serde".into() }).await?;
    stars.link(&Star { user: "bob".into(), repo: "ddb".into() }).await?;
    assert!(!stars.link(&Star { user: "bob".into(), repo: "ddb".into() }).await?.is_new());

    assert_eq!(User::get(&db, "ann").await?.map(|u| u.starred), Some(2));
    assert_eq!(Repo::get(&db, "ddb").await?.map(|r| r.stars), Some(2));
    assert_eq!(Repo::get(&db, "serde").await?.map(|r| r.stars), Some(1));
    // The in-degree of a one-directional edge is its `to_count`.
    db.reset_requests();
    assert_eq!(stars.in_degree("ddb").await?, 2);
    assert_eq!(stars.out_degree("ann").await?, 2);
    assert_eq!(db.requests().get(Op::GetItem), 2);
    let starred: Vec<String> =
        stars.outgoing("ann").all().await?.into_iter().map(|s| s.repo).collect();
    assert_eq!(starred, ["ddb", "serde"]);
    // Targets shared by two users need only outgoing edges.
    let both = stars.common_targets("ann", "bob").ids().await?;
    assert_eq!(both, ["ddb"]);

    stars.unlink("ann", "ddb").await?;
    assert_eq!(Repo::get(&db, "ddb").await?.map(|r| r.stars), Some(1));
    assert_eq!(User::get(&db, "ann").await?.map(|u| u.starred), Some(1));
    Ok(())
}

#[tokio::test]
async fn removing_a_posts_likes_is_chunked_and_moves_the_counter() -> Result<(), Error> {
    let db = support::db::<Rel>().await;
    post(&db, "p1").await?;
    post(&db, "p2").await?;
    let likes = Like::edges(&db);
    let all: Vec<Like> = (0..70).map(|u| Like::new("p1", &format!("u{u:02}"))).collect();
    let report = likes.link_all(&all).await?;
    assert_eq!((report.created, report.existing), (70, 0));
    likes.link(&Like::new("p2", "u00")).await?;
    assert_eq!(likes_of(&db, "p1").await, 70);

    let first = likes.remove_outgoing("p1").max_transactions(1).await?;
    assert!(!first.done);
    assert_eq!(likes_of(&db, "p1").await, 70 - first.outgoing as u64);
    let rest = likes.remove_outgoing("p1").await?;
    assert!(rest.done);
    assert_eq!(first.outgoing + rest.outgoing, 70);
    assert_eq!(likes_of(&db, "p1").await, 0);
    assert!(likers(&db, "p1").await.is_empty());
    assert_eq!(likers(&db, "p2").await, ["u00"], "other posts keep their likes");
    assert_eq!(likes_of(&db, "p2").await, 1);
    Ok(())
}

/// 16 tasks like one post at once, from 6 users, half of them with `link_new`: the counter
/// equals the number of distinct markers, and every like reports what it did exactly.
#[tokio::test]
async fn concurrent_likes_count_each_liker_once() -> Result<(), Error> {
    let db = support::db::<Rel>().await;
    post(&db, "hot").await?;
    let mut tasks = Vec::new();
    for task in 0..16usize {
        let db = db.clone();
        tasks.push(tokio::spawn(async move {
            let likes = Like::edges(&db);
            let like = Like { at: task as u32, ..Like::new("hot", &format!("user{}", task % 6)) };
            if task % 2 == 0 {
                likes.link(&like).await.map(Linked::is_new)
            } else {
                match likes.link_new(&like).await {
                    Ok(()) => Ok(true),
                    Err(e) if e.is_already_exists() => Ok(false),
                    Err(e) => Err(e),
                }
            }
        }));
    }
    let mut created = 0;
    for task in tasks {
        if task.await.expect("task")? {
            created += 1;
        }
    }
    assert_eq!(created, 6, "one like per user was new");
    assert_eq!(likers(&db, "hot").await.len(), 6);
    assert_eq!(likes_of(&db, "hot").await, 6);
    Ok(())
}

/// Responses lost after the service applied a like: the SDK sends the transaction again
/// with its token, and each like counts once (and `link_new` still reports it as new).
#[tokio::test]
async fn a_like_whose_response_was_lost_counts_once() -> Result<(), Error> {
    let clean = support::db::<Rel>().await;
    post(&clean, "p1").await?;
    let harness = Harness::on(clean.clone(), Faults::seeded(2).drop_after(0.5)).await?;
    let likes = Like::edges(harness.db());
    for u in 0..12 {
        let like = Like::new("p1", &format!("u{u:02}"));
        if u % 2 == 0 {
            assert!(likes.link(&like).await?.is_new(), "like {u}");
        } else {
            likes.link_new(&like).await?;
        }
    }
    let lost = harness.proxy().counts().dropped_after;
    assert!(lost >= 6, "faults were injected: {lost}");
    assert_eq!(likers(&clean, "p1").await.len(), 12);
    assert_eq!(likes_of(&clean, "p1").await, 12);
    // Unlinks too.
    for u in 0..6 {
        assert!(likes.unlink("p1", format!("u{u:02}").as_str()).await?.was_linked());
    }
    assert_eq!(likes_of(&clean, "p1").await, 6);
    assert_eq!(likers(&clean, "p1").await.len(), 6);
    Ok(())
}

#[tokio::test]
async fn bad_input_is_a_typed_error_before_any_request() -> Result<(), Error> {
    let db = support::db::<Rel>().await;
    post(&db, "p1").await?;
    let likes = Like::edges(&db);
    db.reset_requests();
    let long = "x".repeat(1100);
    let err = likes.link_new(&Like::new("p1", &long)).await.unwrap_err();
    assert!(matches!(err, Error::InvalidKey { .. }), "{err}");
    let err = likes.unlink("p1", long.as_str()).await.unwrap_err();
    assert!(matches!(err, Error::InvalidKey { .. }), "{err}");
    assert_eq!(db.requests().total(), 0);

    // An item of another type under a like's key is left alone.
    let mut foreign = std::collections::HashMap::new();
    foreign.insert("pk".to_owned(), s("POST#p1"));
    foreign.insert("sk".to_owned(), s("LIKE#eve"));
    foreign.insert("_type".to_owned(), s("Spam"));
    support::put_raw(&db, foreign).await;
    let before = support::snapshot(&db).await;
    for unique in [false, true] {
        let like = Like::new("p1", "eve");
        let err = if unique {
            likes.link_new(&like).await.unwrap_err()
        } else {
            likes.link(&like).await.unwrap_err()
        };
        assert!(matches!(err, Error::WrongEntityType { .. }), "{err}");
        assert!(!err.is_already_exists());
    }
    assert!(likes.exists("p1", "eve").await.is_err());
    assert_eq!(support::snapshot(&db).await, before);
    assert_eq!(raw(&db, "POST#p1", "LIKE#eve").await.map(|i| i["_type"].clone()), Some(s("Spam")));
    Ok(())
}

mod model {
    use proptest::prelude::*;

    use super::*;

    #[derive(Debug, Clone)]
    enum Write {
        Link(usize, usize),
        LinkNew(usize, usize),
        Unlink(usize, usize),
        LinkAll(Vec<(usize, usize)>),
        RemoveUser(usize),
    }

    fn write(users: usize, repos: usize) -> impl Strategy<Value = Write> {
        let pair = (0..users, 0..repos);
        prop_oneof![
            3 => pair.clone().prop_map(|(a, b)| Write::Link(a, b)),
            3 => pair.clone().prop_map(|(a, b)| Write::LinkNew(a, b)),
            2 => pair.clone().prop_map(|(a, b)| Write::Unlink(a, b)),
            1 => prop::collection::vec(pair, 0..6).prop_map(Write::LinkAll),
            1 => (0..users).prop_map(Write::RemoveUser),
        ]
    }

    fn run<F: std::future::Future<Output = Result<(), Error>>>(f: F) -> Result<(), Error> {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build();
        runtime.expect("runtime").block_on(f)
    }

    fn star(users: &[String], repos: &[String], (u, r): (usize, usize)) -> Star {
        Star { user: users[u].clone(), repo: repos[r].clone() }
    }

    /// Stars between users and repositories with arbitrary names (separators, escape
    /// characters, any Unicode): the markers and both counters agree with a set of pairs.
    async fn stars(
        users: Vec<String>,
        repos: Vec<String>,
        writes: Vec<Write>,
    ) -> Result<(), Error> {
        let db = support::db::<Rel>().await;
        for id in &users {
            User { id: id.clone(), starred: 0 }.create(&db).await?;
        }
        for name in &repos {
            Repo { name: name.clone(), stars: 0 }.create(&db).await?;
        }
        let stars = Star::edges(&db);
        let mut model: BTreeSet<(usize, usize)> = BTreeSet::new();
        for w in writes {
            match w {
                Write::Link(u, r) => {
                    let new = stars.link(&star(&users, &repos, (u, r))).await?.is_new();
                    assert_eq!(new, model.insert((u, r)));
                }
                Write::LinkNew(u, r) => {
                    let result = stars.link_new(&star(&users, &repos, (u, r))).await;
                    let fresh = model.insert((u, r));
                    match result {
                        Ok(()) => assert!(fresh),
                        Err(e) => assert!(!fresh && e.is_already_exists(), "{e}"),
                    }
                }
                Write::Unlink(u, r) => {
                    let was = stars.unlink(users[u].as_str(), repos[r].as_str()).await?;
                    assert_eq!(was.was_linked(), model.remove(&(u, r)));
                }
                Write::LinkAll(pairs) => {
                    let edges: Vec<Star> = pairs.iter().map(|p| star(&users, &repos, *p)).collect();
                    let report = stars.link_all(&edges).await?;
                    let before = model.len();
                    model.extend(pairs.iter().copied());
                    assert_eq!(report.created, model.len() - before);
                    assert_eq!(report.created + report.existing, pairs.len());
                }
                Write::RemoveUser(u) => {
                    let removed = stars.remove_outgoing(users[u].as_str()).await?;
                    let before = model.len();
                    model.retain(|(a, _)| *a != u);
                    assert_eq!(removed.outgoing, before - model.len());
                    assert!(removed.done);
                }
            }
        }
        for (u, user) in users.iter().enumerate() {
            let expected: BTreeSet<&String> =
                model.iter().filter(|(a, _)| *a == u).map(|(_, r)| &repos[*r]).collect();
            let stored = stars.outgoing(user.as_str()).consistent().all().await?;
            let got: BTreeSet<&String> = stored.iter().map(|s| &s.repo).collect();
            assert_eq!(got.len(), stored.len(), "one marker per pair");
            assert_eq!(got, expected, "stars of {user:?}");
            assert_eq!(stars.out_degree(user.as_str()).await?, expected.len() as u64);
            for (r, repo) in repos.iter().enumerate() {
                let linked = stars.exists(user.as_str(), repo.as_str()).await?;
                assert_eq!(linked, model.contains(&(u, r)), "{user:?} -> {repo:?}");
            }
        }
        for (r, repo) in repos.iter().enumerate() {
            let count = model.iter().filter(|(_, b)| *b == r).count() as i64;
            let stored = Repo::get(&db, repo.as_str()).await?.map(|r| r.stars);
            assert_eq!(stored, Some(count), "stars of repo {repo:?}");
            assert_eq!(stars.in_degree(repo.as_str()).await?, count as u64);
        }
        Ok(())
    }

    /// Distinct names: separators, the escape character, any Unicode, the empty name.
    fn names(n: usize) -> impl Strategy<Value = Vec<String>> {
        prop::collection::btree_set("[#\\\\~|:a\\PC]{0,6}", n..=n)
            .prop_map(|set| set.into_iter().collect())
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 12, failure_persistence: None, ..ProptestConfig::default() })]

        #[test]
        fn prop_stars_agree_with_a_model(
            users in names(3),
            repos in names(3),
            writes in prop::collection::vec(write(3, 3), 1..20),
        ) {
            run(stars(users, repos, writes)).expect("star writes");
        }
    }
}
