//! Graph edges (`#[derive(Edge)]`): both directions and the counters written together,
//! idempotent links and unlinks, reads with their request counts, traversals, node removal,
//! and the invariants after concurrent writers and injected faults.

use std::collections::{BTreeMap, BTreeSet};

use ddb_model::aws_sdk_dynamodb::types::AttributeValue;
use ddb_model::edge::{Direction, Linked, Unlinked};
use ddb_model::prelude::*;
use ddb_model::testing::{Faults, Harness};
use ddb_model::{Edges, Item, Op};
use futures_util::TryStreamExt;

use crate::edge_model::{Cable, Device, Follow, Graph, Like, Member, Tagged};
use crate::support::{self, raw, s};

async fn members(db: &Db<Graph>, ids: &[&str]) -> Result<(), Error> {
    for id in ids {
        Member::new(id).create(db).await?;
    }
    Ok(())
}

async fn counters(db: &Db<Graph>, id: &str) -> (u64, u64) {
    let m = Member::get(db, id).await.expect("read member").expect("member exists");
    (m.following, m.followers)
}

/// Every item of the table, raw.
async fn scan_all(db: &Db<Graph>) -> Vec<Item> {
    db.scan_items().all().await.expect("scan")
}

fn text<'a>(item: &'a Item, attr: &str) -> &'a str {
    item.get(attr).and_then(|v| v.as_s().ok()).map_or("", String::as_str)
}

/// The follow graph's invariants, from a scan of the whole table: every forward item has its
/// inverse and the other way round, and every member's counters equal their real degrees.
pub(crate) async fn check_follow_invariants(db: &Db<Graph>) -> BTreeSet<(String, String)> {
    let items = scan_all(db).await;
    let mut forward = BTreeSet::new();
    let mut inverse = BTreeSet::new();
    let mut stored: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    for item in &items {
        let pair = || (text(item, "follower").to_owned(), text(item, "followee").to_owned());
        match text(item, "_type") {
            "Follow" => {
                assert_eq!(text(item, "pk"), format!("MEMBER#{}", text(item, "follower")));
                forward.insert(pair());
            }
            "Follow~inverse" => {
                assert_eq!(text(item, "pk"), format!("MEMBER#{}", text(item, "followee")));
                assert!(!item.contains_key("muted"), "muted is not copied: {item:?}");
                inverse.insert(pair());
            }
            "Member" => {
                let n = |a: &str| {
                    item.get(a).and_then(|v| v.as_n().ok()).map_or(0, |n| n.parse().expect("count"))
                };
                stored.insert(text(item, "id").to_owned(), (n("following"), n("followers")));
            }
            other => panic!("unexpected item type {other}"),
        }
    }
    assert_eq!(forward, inverse, "every forward item has its inverse, and only those");
    for (id, (following, followers)) in &stored {
        let out = forward.iter().filter(|(a, _)| a == id).count() as u64;
        let inc = forward.iter().filter(|(_, b)| b == id).count() as u64;
        assert_eq!((*following, *followers), (out, inc), "counters of {id}");
    }
    forward
}

#[tokio::test]
async fn link_writes_both_sides_and_both_counters_in_one_request() -> Result<(), Error> {
    let db = support::db::<Graph>().await;
    members(&db, &["ann", "bob"]).await?;
    let follows = Follow::edges(&db);
    db.reset_requests();
    let linked = follows.link(&Follow::new("ann", "bob")).await?;
    assert_eq!(linked, Linked::Created);
    let requests = db.requests();
    println!("link: {requests}");
    assert_eq!(requests.total(), 1);
    assert_eq!(requests.get(Op::TransactWriteItems), 1);

    let forward = raw(&db, "MEMBER#ann", "FOLLOWS#bob").await.expect("forward item");
    assert_eq!(forward["_type"], s("Follow"));
    assert_eq!(forward["muted"], AttributeValue::Bool(false));
    let inverse = raw(&db, "MEMBER#bob", "FOLLOWER#ann").await.expect("inverse item");
    assert_eq!(inverse["_type"], s("Follow~inverse"));
    assert_eq!(inverse["follower_name"], s("Name of ann"));
    assert!(!inverse.contains_key("muted"), "only the listed fields are copied");
    assert_eq!(counters(&db, "ann").await, (1, 0));
    assert_eq!(counters(&db, "bob").await, (0, 1));
    check_follow_invariants(&db).await;
    Ok(())
}

#[tokio::test]
async fn linking_twice_changes_nothing_counters_included() -> Result<(), Error> {
    let db = support::db::<Graph>().await;
    members(&db, &["ann", "bob"]).await?;
    let follows = Follow::edges(&db);
    follows.link(&Follow::new("ann", "bob")).await?;
    let before = support::snapshot(&db).await;
    db.reset_requests();
    let mut again = Follow::new("ann", "bob");
    again.since = 1999;
    assert_eq!(follows.link(&again).await?, Linked::Existing);
    assert_eq!(db.requests().total(), 1, "the second link is one (canceled) transaction");
    assert_eq!(support::snapshot(&db).await, before, "nothing changed");
    assert_eq!(follows.get("ann", "bob").await?.map(|f| f.since), Some(2024));
    Ok(())
}

#[tokio::test]
async fn unlink_removes_both_sides_and_is_idempotent() -> Result<(), Error> {
    let db = support::db::<Graph>().await;
    members(&db, &["ann", "bob", "cy"]).await?;
    let follows = Follow::edges(&db);
    follows.link(&Follow::new("ann", "bob")).await?;
    follows.link(&Follow::new("cy", "bob")).await?;
    db.reset_requests();
    assert_eq!(follows.unlink("ann", "bob").await?, Unlinked::Removed);
    assert_eq!(db.requests().total(), 1);
    assert!(raw(&db, "MEMBER#ann", "FOLLOWS#bob").await.is_none());
    assert!(raw(&db, "MEMBER#bob", "FOLLOWER#ann").await.is_none());
    assert_eq!(counters(&db, "ann").await, (0, 0));
    assert_eq!(counters(&db, "bob").await, (0, 1));

    let before = support::snapshot(&db).await;
    assert_eq!(follows.unlink("ann", "bob").await?, Unlinked::Absent);
    assert_eq!(support::snapshot(&db).await, before);
    let followers = check_follow_invariants(&db).await;
    assert_eq!(followers.len(), 1);
    Ok(())
}

#[tokio::test]
async fn a_link_to_a_missing_counted_node_fails_and_writes_nothing() -> Result<(), Error> {
    let db = support::db::<Graph>().await;
    members(&db, &["ann"]).await?;
    let before = support::snapshot(&db).await;
    let err = Follow::edges(&db).link(&Follow::new("ann", "ghost")).await.unwrap_err();
    assert!(err.is_not_found(), "{err}");
    let failed = err.failed_action().expect("a failed action");
    assert_eq!(failed.entity, "Member");
    assert_eq!(failed.key, "(\"MEMBER#ghost\", \"PROFILE\")");
    assert_eq!(support::snapshot(&db).await, before);
    Ok(())
}

#[tokio::test]
async fn bad_input_is_a_typed_error_before_any_request() -> Result<(), Error> {
    let db = support::db::<Graph>().await;
    members(&db, &["ann"]).await?;
    let follows = Follow::edges(&db);
    let long = "x".repeat(1100);
    let err = crate::no_request!(db, follows.link(&Follow::new("ann", &long)).await.unwrap_err());
    assert!(err.is_invalid_input(), "{err}");
    assert!(matches!(&err, Error::InvalidKey { attribute, .. } if attribute == "sk"), "{err}");
    let huge = "y".repeat(2100);
    let err = crate::no_request!(db, follows.unlink(huge.as_str(), "ann").await.unwrap_err());
    assert!(matches!(&err, Error::InvalidKey { attribute, .. } if attribute == "pk"), "{err}");
    let err = crate::no_request!(db, follows.exists("ann", long.as_str()).await.unwrap_err());
    assert!(err.is_invalid_input());
    let err = crate::no_request!(db, follows.outgoing(huge.as_str()).all().await.unwrap_err());
    assert!(err.is_invalid_input());
    let err =
        crate::no_request!(db, follows.update("ann", long.as_str()).set(Follow::MUTED, true).await);
    assert!(err.unwrap_err().is_invalid_input());
    let err = crate::no_request!(db, follows.mutual(huge.as_str()).all().await.unwrap_err());
    assert!(err.is_invalid_input());
    assert_eq!(support::snapshot(&db).await.len(), 1);
    Ok(())
}

#[tokio::test]
async fn an_item_of_another_type_under_an_edge_key_is_left_alone() -> Result<(), Error> {
    let db = support::db::<Graph>().await;
    members(&db, &["ann", "bob"]).await?;
    let mut foreign = Item::new();
    foreign.insert("pk".into(), s("MEMBER#bob"));
    foreign.insert("sk".into(), s("FOLLOWER#ann"));
    foreign.insert("_type".into(), s("Stranger"));
    support::put_raw(&db, foreign).await;
    let before = support::snapshot(&db).await;
    let err = Follow::edges(&db).link(&Follow::new("ann", "bob")).await.unwrap_err();
    let failed = err.failed_action().expect("failed action");
    assert!(
        matches!(
            failed.reason.condition_error(),
            Some(Error::WrongEntityType { expected: "Follow~inverse", .. })
        ),
        "{err}"
    );
    assert_eq!(support::snapshot(&db).await, before);

    let mut foreign = Item::new();
    foreign.insert("pk".into(), s("MEMBER#bob"));
    foreign.insert("sk".into(), s("FOLLOWS#ann"));
    foreign.insert("_type".into(), s("Stranger"));
    support::put_raw(&db, foreign).await;
    let err = Follow::edges(&db).link(&Follow::new("bob", "ann")).await.unwrap_err();
    assert!(matches!(err, Error::WrongEntityType { expected: "Follow", .. }), "{err}");
    let err = Follow::edges(&db).unlink("bob", "ann").await.unwrap_err();
    assert!(err.failed_action().is_some(), "{err}");
    assert!(raw(&db, "MEMBER#bob", "FOLLOWS#ann").await.is_some(), "left alone");
    Ok(())
}

#[tokio::test]
async fn updates_change_both_sides_in_one_request() -> Result<(), Error> {
    let db = support::db::<Graph>().await;
    members(&db, &["ann", "bob"]).await?;
    let follows = Follow::edges(&db);
    follows.link(&Follow::new("ann", "bob")).await?;
    db.reset_requests();
    follows
        .update("ann", "bob")
        .set(Follow::FOLLOWER_NAME, "Annie")
        .set(Follow::MUTED, true)
        .add(Follow::SINCE, 1)
        .await?;
    assert_eq!(db.requests().total(), 1);
    let out = follows.get("ann", "bob").await?.expect("edge");
    assert_eq!((out.follower_name.as_str(), out.muted, out.since), ("Annie", true, 2025));
    let inc = follows.incoming("bob").consistent().all().await?;
    assert_eq!(inc.len(), 1);
    assert_eq!((inc[0].follower_name.as_str(), inc[0].muted, inc[0].since), ("Annie", false, 2025));
    // A condition on the forward item; an absent edge is not found.
    let err = follows
        .update("ann", "bob")
        .set(Follow::MUTED, false)
        .condition(Follow::SINCE.lt(2000))
        .await;
    assert!(err.unwrap_err().is_condition_failed());
    let err = follows.update("bob", "ann").set(Follow::MUTED, true).await.unwrap_err();
    assert!(err.is_not_found(), "{err}");
    assert!(raw(&db, "MEMBER#bob", "FOLLOWS#ann").await.is_none(), "no item made up");
    check_follow_invariants(&db).await;
    Ok(())
}

#[tokio::test]
async fn outgoing_and_incoming_are_sorted_queries_with_cursors() -> Result<(), Error> {
    let db = support::db::<Graph>().await;
    let ids: Vec<String> = (0..12).map(|i| format!("m{i:02}")).collect();
    for id in &ids {
        Member::new(id).create(&db).await?;
    }
    let follows = Follow::edges(&db);
    for id in ids.iter().skip(1).rev() {
        follows.link(&Follow::new("m00", id)).await?;
        follows.link(&Follow::new(id, "m00")).await?;
    }
    db.reset_requests();
    let page = follows.outgoing("m00").limit(5).page(None).await?;
    assert_eq!(db.requests().get(Op::Query), 1, "a page is one request");
    let first: Vec<&str> = page.items.iter().map(|f| f.followee.as_str()).collect();
    assert_eq!(first, ["m01", "m02", "m03", "m04", "m05"]);
    let next = page.next.expect("more");
    let page = follows.outgoing("m00").limit(5).page(Some(&next)).await?;
    assert_eq!(page.items[0].followee, "m06");
    // The cursor belongs to the outgoing query of m00.
    let err = follows.incoming("m00").limit(5).page(Some(&next)).await.unwrap_err();
    assert!(matches!(err, Error::InvalidCursor { .. }), "{err}");

    let incoming: Vec<String> =
        follows.incoming("m00").page_size(4).stream().map_ok(|f| f.follower).try_collect().await?;
    assert_eq!(incoming, ids[1..]);
    assert_eq!(follows.outgoing("m00").count().await?, 11);
    assert_eq!(follows.out_degree("m00").await?, 11);
    assert_eq!(follows.in_degree("m05").await?, 1);
    assert!(follows.exists("m03", "m00").await?);
    assert!(!follows.exists("m03", "m04").await?);
    Ok(())
}

#[tokio::test]
async fn an_index_inverse_is_one_item_and_one_write() -> Result<(), Error> {
    let db = support::db::<Graph>().await;
    let likes = Like::edges(&db);
    db.reset_requests();
    assert!(likes.link(&Like { shopper: "ann".into(), product: 7 }).await?.is_new());
    assert_eq!(db.requests().get(Op::PutItem), 1);
    assert_eq!(db.requests().total(), 1);
    assert!(!likes.link(&Like { shopper: "ann".into(), product: 7 }).await?.is_new());
    for (shopper, product) in [("bob", 7), ("cy", 7), ("ann", 8)] {
        likes.link(&Like { shopper: shopper.into(), product }).await?;
    }
    let item = raw(&db, "SHOPPER#ann", "LIKES#0000000007").await.expect("like");
    assert_eq!(item["gsi1pk"], s("PRODUCT#0000000007"));
    let who: Vec<String> =
        likes.incoming(7u32).all().await?.into_iter().map(|l| l.shopper).collect();
    assert_eq!(who, ["ann", "bob", "cy"]);
    assert_eq!(likes.in_degree(7u32).await?, 3);
    assert_eq!(likes.out_degree("ann").await?, 2);
    db.reset_requests();
    assert!(likes.unlink("bob", 7u32).await?.was_linked());
    assert_eq!(db.requests().total(), 1);
    assert_eq!(likes.incoming(7u32).count().await?, 2);
    assert_eq!(support::snapshot(&db).await.len(), 3);
    Ok(())
}

#[tokio::test]
async fn a_symmetric_edge_is_stored_from_both_ends() -> Result<(), Error> {
    let db = support::db::<Graph>().await;
    for id in 1..=3 {
        Device { id, links: 0 }.create(&db).await?;
    }
    let cables = Cable::edges(&db);
    db.reset_requests();
    cables.link(&Cable { a: 1, b: 2, meters: 5 }).await?;
    assert_eq!(db.requests().total(), 1);
    assert!(!cables.link(&Cable { a: 2, b: 1, meters: 9 }).await?.is_new(), "the same cable");
    let back = cables.get(2u32, 1u32).await?.expect("mirrored");
    assert_eq!((back.a, back.b, back.meters), (2, 1, 5));
    // A self-loop is one item and counts once.
    cables.link(&Cable { a: 3, b: 3, meters: 1 }).await?;
    cables.link(&Cable { a: 3, b: 1, meters: 2 }).await?;
    let dbr = &db;
    let links = |id| async move { Device::get(dbr, id).await.map(|d| d.map(|d| d.links)) };
    assert_eq!(links(1).await?, Some(2));
    assert_eq!(links(2).await?, Some(1));
    assert_eq!(links(3).await?, Some(2));
    assert_eq!(cables.out_degree(3u32).await?, 2);
    let incoming: Vec<(u32, u32)> =
        cables.incoming(1u32).all().await?.iter().map(|c| (c.a, c.b)).collect();
    assert_eq!(incoming, [(2, 1), (3, 1)], "incoming edges end at the node");
    cables.update(1u32, 2u32).set(Cable::METERS, 6).await?;
    assert_eq!(cables.get(2u32, 1u32).await?.map(|c| c.meters), Some(6));
    assert!(cables.unlink(2u32, 1u32).await?.was_linked());
    assert!(cables.get(1u32, 2u32).await?.is_none());
    assert!(cables.unlink(3u32, 3u32).await?.was_linked());
    assert_eq!((links(1).await?, links(2).await?, links(3).await?), (Some(1), Some(0), Some(1)));
    assert_eq!(support::snapshot(&db).await.len(), 3 + 2);
    Ok(())
}

#[tokio::test]
async fn tags_on_posts_are_many_to_many() -> Result<(), Error> {
    let db = support::db::<Graph>().await;
    let tagged = Tagged::edges(&db);
    for (post, tag) in [(1, "rust"), (1, "db"), (2, "rust"), (3, "rust"), (3, "db"), (3, "a#b")] {
        tagged.link(&Tagged { post, tag: tag.into() }).await?;
    }
    let tags: Vec<String> = tagged.outgoing(3u64).all().await?.into_iter().map(|t| t.tag).collect();
    assert_eq!(tags, ["a#b", "db", "rust"]);
    let posts: Vec<u64> =
        tagged.incoming("rust").all().await?.into_iter().map(|t| t.post).collect();
    assert_eq!(posts, [1, 2, 3]);
    let inverse = raw(&db, "TAG#a%23b", "POST#00000000000000000003").await.expect("inverse");
    assert_eq!(inverse["_type"], s("PostOfTag"));
    // Posts with both tags, and tags of both posts: merges, no request per item.
    assert_eq!(tagged.common_sources("rust", "db").ids().await?, [1, 3]);
    assert_eq!(tagged.common_targets(1u64, 3u64).ids().await?, ["db", "rust"]);
    Ok(())
}

fn pages(n: u64, page: u64) -> u64 {
    n.div_ceil(page).max(1)
}

#[tokio::test]
async fn mutual_reads_each_list_once_in_pages() -> Result<(), Error> {
    let db = support::db::<Graph>().await;
    let follows = Follow::edges(&db);
    let ids: Vec<String> = (0..40).map(|i| format!("u{i:02}")).collect();
    for id in std::iter::once(&"me".to_owned()).chain(&ids) {
        Member::new(id).create(&db).await?;
    }
    // me follows u00..u29 (n = 30); u10..u39 every other one follows me back (m = 15);
    // mutual: u10, u12, ..., u28.
    for id in &ids[..30] {
        follows.link(&Follow::new("me", id)).await?;
    }
    for id in ids[10..].iter().step_by(2) {
        follows.link(&Follow::new(id, "me")).await?;
    }
    let expected: Vec<String> = ids[10..30].iter().step_by(2).cloned().collect();
    for page in [1u32, 4, 5, 7, 10, 15, 30, 100] {
        db.reset_requests();
        let mutual = follows.mutual("me").page_size(page).ids().await?;
        let queries = db.requests().get(Op::Query);
        let bound = pages(30, page.into()) + pages(15, page.into());
        println!("mutual, n = 30, m = 15, page = {page}: {queries} requests (bound {bound})");
        assert_eq!(mutual, expected, "page {page}");
        assert!(queries <= bound, "page {page}: {queries} > {bound}");
    }
    // When the last item of each list matches, both lists are read to the end: exactly
    // ceil(n / page) + ceil(m / page), page sizes that divide the lists included.
    follows.link(&Follow::new("u29", "me")).await?;
    follows.unlink("u38", "me").await?;
    follows.unlink("u36", "me").await?;
    follows.unlink("u34", "me").await?;
    follows.unlink("u32", "me").await?;
    follows.unlink("u30", "me").await?;
    let m = follows.incoming("me").count().await? as u64;
    assert_eq!(m, 11);
    for page in [1u32, 3, 4, 6, 10, 12, 30, 31] {
        db.reset_requests();
        let pairs = follows.mutual("me").page_size(page).all().await?;
        let queries = db.requests().get(Op::Query);
        println!("mutual, n = 30, m = {m}, page = {page}: {queries} requests");
        assert_eq!(pairs.len(), 11, "u10, u12, .., u28 and u29");
        assert!(pairs.iter().all(|(out, inc)| out.followee == inc.follower));
        assert_eq!(queries, pages(30, page.into()) + pages(m, page.into()), "page {page}");
    }
    Ok(())
}

#[tokio::test]
async fn neighbourhood_within_hops_with_budget_and_concurrency() -> Result<(), Error> {
    let db = support::db::<Graph>().await;
    // A binary tree of devices, 1..=31: i links to 2i and 2i+1.
    for id in 1..=31u32 {
        Device { id, links: 0 }.create(&db).await?;
    }
    let cables = Cable::edges(&db);
    for id in 1..=15u32 {
        cables.link(&Cable { a: id, b: 2 * id, meters: 1 }).await?;
        cables.link(&Cable { a: id, b: 2 * id + 1, meters: 1 }).await?;
    }
    db.reset_requests();
    let reached = cables.neighbourhood(1u32, 2).concurrency(4).await?;
    assert_eq!(reached.nodes, [(2, 1), (3, 1), (4, 2), (5, 2), (6, 2), (7, 2)]);
    // One page per expanded node: 1 + 2.
    assert_eq!(reached.requests, 3);
    assert_eq!(db.requests().get(Op::Query), 3);
    let reached = cables.neighbourhood(8u32, 3).page_size(1).await?;
    let at: Vec<(u32, u32)> = reached.nodes.clone();
    assert_eq!(at[..3], [(4, 1), (16, 1), (17, 1)]);
    assert_eq!(at.len(), 3 + 2 + 4);
    let err = cables.neighbourhood(1u32, 4).budget(6).await.unwrap_err();
    assert!(
        matches!(err, Error::BudgetExhausted { budget: 6, operation: "neighbourhood" }),
        "{err}"
    );
    Ok(())
}

#[tokio::test]
async fn shortest_paths_search_from_both_ends() -> Result<(), Error> {
    let db = support::db::<Graph>().await;
    let follows = Follow::edges(&db);
    let ids: Vec<String> = (0..20).map(|i| format!("p{i:02}")).collect();
    for id in &ids {
        Member::new(id).create(&db).await?;
    }
    // A chain p00 -> p01 -> ... -> p19, and a shortcut p03 -> p10.
    for w in ids.windows(2) {
        follows.link(&Follow::new(&w[0], &w[1])).await?;
    }
    follows.link(&Follow::new("p03", "p10")).await?;
    let path = follows.shortest_path("p00", "p12").max_depth(20).await?.expect("a path");
    assert_eq!(path, ["p00", "p01", "p02", "p03", "p10", "p11", "p12"]);
    assert_eq!(follows.shortest_path("p12", "p00").max_depth(20).await?, None, "one-way");
    let back = follows.shortest_path("p12", "p00").direction(Direction::Both).max_depth(20).await?;
    assert_eq!(back.map(|p| p.len()), Some(7));
    assert_eq!(follows.shortest_path("p00", "p19").max_depth(5).await?, None, "too far");
    assert_eq!(follows.shortest_path("p05", "p05").await?, Some(vec!["p05".to_owned()]));
    let err = follows.shortest_path("p00", "p19").max_depth(30).budget(5).await.unwrap_err();
    assert!(matches!(err, Error::BudgetExhausted { budget: 5, .. }), "{err}");
    Ok(())
}

#[tokio::test]
async fn also_liked_ranks_with_bounded_fan_out() -> Result<(), Error> {
    let db = support::db::<Graph>().await;
    let likes = Like::edges(&db);
    let data: &[(&str, &[u32])] = &[
        ("ann", &[1, 2, 3]),
        ("bob", &[1, 2, 4]),
        ("cy", &[1, 2, 3, 5]),
        ("dee", &[2, 5]),
        ("eve", &[1, 6]),
    ];
    for (shopper, products) in data {
        for product in *products {
            likes.link(&Like { shopper: (*shopper).into(), product: *product }).await?;
        }
    }
    db.reset_requests();
    let also = likes.also_linked(1u32).top(3).await?;
    assert_eq!(also, [(2, 3), (3, 2), (4, 1)]);
    assert_eq!(db.requests().get(Op::Query), 1 + 4, "one page of likers, one page each");
    let bounded = likes.also_linked(1u32).fan_out(2).budget(3).await?;
    // Two likers (ann, bob), two likes each (1 and 2, in key order).
    assert_eq!(bounded, [(2, 2)]);
    let err = likes.also_linked(1u32).budget(2).await.unwrap_err();
    assert!(matches!(err, Error::BudgetExhausted { .. }), "{err}");

    // The seed's collaborative filtering for a shopper: ann likes 1, 2, 3; bob (1, 2, 4),
    // cy (1, 2, 3, 5), dee (2, 5) and eve (1, 6) share some of them; ann has not liked 4, 5, 6.
    db.reset_requests();
    let for_ann = likes.recommend("ann").await?;
    assert_eq!(for_ann, [(5, 2), (4, 1), (6, 1)]);
    // ann's likes, the likers of each of her 3 products, the likes of each of the 4 others.
    assert_eq!(db.requests().get(Op::Query), 1 + 3 + 4);
    let bounded = likes.recommend("ann").fan_out(1).await?;
    // ann's first like (1), its first liker besides ann (bob), bob's first like (1): nothing
    // new to recommend.
    assert!(bounded.is_empty(), "{bounded:?}");
    let err = likes.recommend("ann").budget(3).await.unwrap_err();
    assert!(matches!(err, Error::BudgetExhausted { .. }), "{err}");
    Ok(())
}

#[tokio::test]
async fn removing_a_node_is_chunked_and_resumable() -> Result<(), Error> {
    let db = support::db::<Graph>().await;
    let follows = Follow::edges(&db);
    let ids: Vec<String> = (0..45).map(|i| format!("r{i:02}")).collect();
    members(&db, &["hub"]).await?;
    for id in &ids {
        Member::new(id).create(&db).await?;
        follows.link(&Follow::new("hub", id)).await?;
    }
    for id in &ids[..40] {
        follows.link(&Follow::new(id, "hub")).await?;
    }
    follows.link(&Follow::new("hub", "hub")).await?;
    follows.link(&Follow::new("r01", "r02")).await?;
    db.reset_requests();
    let first = follows.remove_node("hub").chunk(20).max_transactions(2).await?;
    assert_eq!(
        first,
        ddb_model::edge::Removed { outgoing: 40, incoming: 0, transactions: 2, done: false }
    );
    assert_eq!(db.requests().get(Op::TransactWriteItems), 2);
    check_follow_invariants(&db).await;
    let rest = follows.remove_node("hub").chunk(20).await?;
    assert!(rest.done);
    assert_eq!(first.outgoing + rest.outgoing, 46, "45 and the self-loop");
    assert_eq!(rest.incoming, 40);
    let left = check_follow_invariants(&db).await;
    assert_eq!(left.into_iter().collect::<Vec<_>>(), [("r01".to_owned(), "r02".to_owned())]);
    assert_eq!(counters(&db, "hub").await, (0, 0));
    Ok(())
}

#[tokio::test]
async fn removing_a_node_reads_no_more_after_a_short_chunk() -> Result<(), Error> {
    let db = support::db::<Graph>().await;
    members(&db, &["hub", "a", "b", "c", "d", "e"]).await?;
    let follows = Follow::edges(&db);
    let link = || async {
        for id in ["a", "b", "c", "d", "e"] {
            follows.link(&Follow::new("hub", id)).await?;
        }
        for id in ["a", "b", "c"] {
            follows.link(&Follow::new(id, "hub")).await?;
        }
        Ok::<_, Error>(())
    };
    link().await?;
    db.reset_requests();
    let removed = follows.remove_node("hub").await?;
    assert_eq!(
        removed,
        ddb_model::edge::Removed { outgoing: 5, incoming: 3, transactions: 2, done: true }
    );
    // Each direction holds fewer edges than a chunk: the read that found them found them
    // all, so one read and one transaction per direction.
    assert_eq!(db.requests().get(Op::Query), 2, "{}", db.requests());
    assert_eq!(db.requests().get(Op::TransactWriteItems), 2);
    assert_eq!(check_follow_invariants(&db).await.len(), 0);
    assert_eq!(counters(&db, "hub").await, (0, 0));

    // A full chunk may be followed by more edges: one more read finds out.
    link().await?;
    db.reset_requests();
    let removed = follows.remove_node("hub").chunk(5).await?;
    assert_eq!((removed.outgoing, removed.incoming, removed.transactions), (5, 3, 2));
    assert_eq!(db.requests().get(Op::Query), 3, "{}", db.requests());
    assert_eq!(db.requests().get(Op::TransactWriteItems), 2);
    assert_eq!(check_follow_invariants(&db).await.len(), 0);
    Ok(())
}

#[tokio::test]
async fn unlinking_from_a_deleted_node_skips_its_counter() -> Result<(), Error> {
    let db = support::db::<Graph>().await;
    members(&db, &["ann", "bob"]).await?;
    let follows = Follow::edges(&db);
    follows.link(&Follow::new("ann", "bob")).await?;
    Member::delete(&db, "bob").await?;
    assert!(follows.unlink("ann", "bob").await?.was_linked());
    assert_eq!(counters(&db, "ann").await, (0, 0));
    assert_eq!(support::snapshot(&db).await.len(), 1, "only ann's profile");
    Ok(())
}

/// 16 tasks link and unlink the same few pairs at once: afterwards every forward item has
/// its inverse and every counter is right.
async fn concurrent_churn(db: Db<Graph>, clean: &Db<Graph>, rounds: usize) -> Result<(), Error> {
    let ids = ["a", "b", "c", "d"];
    let mut tasks = Vec::new();
    for task in 0..16usize {
        let db = db.clone();
        tasks.push(tokio::spawn(async move {
            let follows = Follow::edges(&db);
            for round in 0..rounds {
                let x = (task + round) % 4;
                let y = (task * 3 + round * 7 + 1) % 4;
                if (task + round) % 3 == 0 {
                    follows.unlink(ids[x], ids[y]).await?;
                } else {
                    follows.link(&Follow::new(ids[x], ids[y])).await?;
                }
            }
            Ok::<_, Error>(())
        }));
    }
    for task in tasks {
        task.await.expect("task")?;
    }
    let edges = check_follow_invariants(clean).await;
    println!("after 16 x {rounds} concurrent writes: {} edges, {}", edges.len(), db.requests());
    Ok(())
}

#[tokio::test]
async fn invariants_hold_under_sixteen_concurrent_writers() -> Result<(), Error> {
    let db = support::db::<Graph>().await;
    members(&db, &["a", "b", "c", "d"]).await?;
    concurrent_churn(db.clone(), &db, 25).await
}

#[tokio::test]
async fn invariants_hold_when_requests_fail_and_responses_are_lost() -> Result<(), Error> {
    let clean = support::db::<Graph>().await;
    members(&clean, &["a", "b", "c", "d"]).await?;
    for faults in [Faults::seeded(7).drop_after(1.0 / 7.0), Faults::seeded(5).drop_before(0.2)] {
        let harness = Harness::on(clean.clone(), faults).await?;
        concurrent_churn(harness.db().clone(), &clean, 12).await?;
        let counts = harness.proxy().counts();
        println!("faults injected: {counts}");
        assert!(counts.faults() >= 10, "faults were injected: {counts}");
    }
    Ok(())
}

#[tokio::test]
async fn edges_of_other_kinds_do_not_mix() -> Result<(), Error> {
    let db = support::db::<Graph>().await;
    members(&db, &["ann", "bob"]).await?;
    Follow::edges(&db).link(&Follow::new("ann", "bob")).await?;
    Follow::edges(&db).link(&Follow::new("bob", "ann")).await?;
    // ann's partition holds her profile, a forward and an inverse item: each read sees its own.
    let outgoing: Edges<'_, Follow> = db.edges();
    assert_eq!(outgoing.outgoing("ann").count().await?, 1);
    assert_eq!(outgoing.incoming("ann").count().await?, 1);
    assert_eq!(Member::partition(&db, "ann").items().count().await?, 3);
    Ok(())
}

#[tokio::test]
async fn a_lookup_of_a_single_edge_is_one_request() -> Result<(), Error> {
    let db = support::db::<Graph>().await;
    members(&db, &["ann", "bob"]).await?;
    let follows = Follow::edges(&db);
    follows.link(&Follow::new("ann", "bob")).await?;
    db.reset_requests();
    assert!(follows.exists("ann", "bob").await?);
    assert_eq!(follows.in_degree("bob").await?, 1);
    assert!(follows.get("bob", "ann").await?.is_none());
    assert_eq!(db.requests().get(Op::GetItem), 3);
    assert_eq!(db.requests().total(), 3);
    Ok(())
}

#[tokio::test]
async fn link_all_packs_many_edges_per_transaction() -> Result<(), Error> {
    let db = support::db::<Graph>().await;
    let ids: Vec<String> = (0..30).map(|i| format!("b{i:02}")).collect();
    for id in &ids {
        Member::new(id).create(&db).await?;
    }
    let follows = Follow::edges(&db);
    follows.link(&Follow::new("b03", "b04")).await?;
    // Everyone follows the next three; b03 -> b04 exists; one follow is listed twice.
    let mut all: Vec<Follow> = Vec::new();
    for (i, id) in ids.iter().enumerate() {
        for d in 1..=3 {
            all.push(Follow::new(id, &ids[(i + d) % ids.len()]));
        }
    }
    all.push(Follow::new("b10", "b11"));
    db.reset_requests();
    let report = follows.link_all(&all).await?;
    println!("link_all of {} follows: {report:?}, {}", all.len(), db.requests());
    assert_eq!((report.created, report.existing), (89, 2));
    assert!(db.requests().get(Op::TransactWriteItems) <= 8, "{}", db.requests());
    let edges = check_follow_invariants(&db).await;
    assert_eq!(edges.len(), 90);
    assert_eq!(counters(&db, "b00").await, (3, 3));
    // A missing member cancels its chunk: nothing of it is written.
    let before = support::snapshot(&db).await;
    let err = follows.link_all(&[Follow::new("b00", "b20"), Follow::new("b00", "zz")]).await;
    assert!(err.unwrap_err().is_not_found());
    assert_eq!(support::snapshot(&db).await, before);
    Ok(())
}

mod model {
    //! Random sequences of graph writes against an in-memory model: every read agrees.
    use std::collections::BTreeSet;

    use ddb_model::Error;
    use proptest::prelude::*;

    use super::{Cable, Device, Follow, Graph, Member, check_follow_invariants, support};

    const NODES: usize = 5;

    #[derive(Debug, Clone)]
    enum Write {
        Link(usize, usize),
        Unlink(usize, usize),
        LinkAll(Vec<(usize, usize)>),
        Remove(usize),
    }

    fn write() -> impl Strategy<Value = Write> {
        let pair = (0..NODES, 0..NODES);
        prop_oneof![
            4 => pair.clone().prop_map(|(a, b)| Write::Link(a, b)),
            2 => pair.clone().prop_map(|(a, b)| Write::Unlink(a, b)),
            1 => prop::collection::vec(pair, 0..8).prop_map(Write::LinkAll),
            1 => (0..NODES).prop_map(Write::Remove),
        ]
    }

    fn name(n: usize) -> String {
        format!("n{n}")
    }

    fn run<F: std::future::Future<Output = Result<(), Error>>>(f: F) -> Result<(), Error> {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build();
        runtime.expect("runtime").block_on(f)
    }

    /// Directed edges with inverse items and counters.
    async fn follows(writes: Vec<Write>) -> Result<(), Error> {
        let db = support::db::<Graph>().await;
        for n in 0..NODES {
            Member::new(&name(n)).create(&db).await?;
        }
        let follows = Follow::edges(&db);
        let mut model: BTreeSet<(usize, usize)> = BTreeSet::new();
        for w in writes {
            match w {
                Write::Link(a, b) => {
                    let new = follows.link(&Follow::new(&name(a), &name(b))).await?.is_new();
                    assert_eq!(new, model.insert((a, b)));
                }
                Write::Unlink(a, b) => {
                    let was = follows.unlink(name(a).as_str(), name(b).as_str()).await?;
                    assert_eq!(was.was_linked(), model.remove(&(a, b)));
                }
                Write::LinkAll(pairs) => {
                    let edges: Vec<Follow> =
                        pairs.iter().map(|(a, b)| Follow::new(&name(*a), &name(*b))).collect();
                    let report = follows.link_all(&edges).await?;
                    let before = model.len();
                    model.extend(pairs.iter().copied());
                    assert_eq!(report.created, model.len() - before);
                    assert_eq!(report.created + report.existing, pairs.len());
                }
                Write::Remove(n) => {
                    let removed = follows.remove_node(name(n).as_str()).await?;
                    let before = model.len();
                    model.retain(|(a, b)| *a != n && *b != n);
                    assert_eq!(removed.outgoing + removed.incoming, before - model.len());
                    assert!(removed.done);
                }
            }
        }
        let stored = check_follow_invariants(&db).await;
        let expected: BTreeSet<(String, String)> =
            model.iter().map(|(a, b)| (name(*a), name(*b))).collect();
        assert_eq!(stored, expected);
        for n in 0..NODES {
            let me = name(n);
            let out: Vec<String> = follows
                .outgoing(me.as_str())
                .all()
                .await?
                .into_iter()
                .map(|f| f.followee)
                .collect();
            let inc: Vec<String> = follows
                .incoming(me.as_str())
                .all()
                .await?
                .into_iter()
                .map(|f| f.follower)
                .collect();
            let model_out: Vec<String> =
                model.iter().filter(|(a, _)| *a == n).map(|(_, b)| name(*b)).collect();
            let model_in: Vec<String> =
                model.iter().filter(|(_, b)| *b == n).map(|(a, _)| name(*a)).collect();
            assert_eq!((&out, &inc), (&model_out, &model_in), "{me}");
            let mutual = follows.mutual(me.as_str()).page_size(2).ids().await?;
            let model_mutual: Vec<String> =
                model_out.iter().filter(|x| model_in.contains(x)).cloned().collect();
            assert_eq!(mutual, model_mutual, "mutual of {me}");
            assert_eq!(follows.out_degree(me.as_str()).await?, model_out.len() as u64);
            assert_eq!(follows.in_degree(me.as_str()).await?, model_in.len() as u64);
        }
        Ok(())
    }

    /// Undirected edges stored from both ends, with one counter.
    async fn cables(writes: Vec<Write>) -> Result<(), Error> {
        let db = support::db::<Graph>().await;
        for n in 0..NODES {
            Device { id: n as u32, links: 0 }.create(&db).await?;
        }
        let cables = Cable::edges(&db);
        let key = |a: usize, b: usize| (a.min(b), a.max(b));
        let cable = |a: usize, b: usize| Cable { a: a as u32, b: b as u32, meters: 1 };
        let mut model: BTreeSet<(usize, usize)> = BTreeSet::new();
        for w in writes {
            match w {
                Write::Link(a, b) => {
                    let new = cables.link(&cable(a, b)).await?.is_new();
                    assert_eq!(new, model.insert(key(a, b)));
                }
                Write::Unlink(a, b) => {
                    let was = cables.unlink(a as u32, b as u32).await?;
                    assert_eq!(was.was_linked(), model.remove(&key(a, b)));
                }
                Write::LinkAll(pairs) => {
                    let edges: Vec<Cable> = pairs.iter().map(|(a, b)| cable(*a, *b)).collect();
                    let report = cables.link_all(&edges).await?;
                    let before = model.len();
                    model.extend(pairs.iter().map(|(a, b)| key(*a, *b)));
                    assert_eq!(report.created, model.len() - before);
                }
                Write::Remove(n) => {
                    cables.remove_node(n as u32).await?;
                    model.retain(|(a, b)| *a != n && *b != n);
                }
            }
        }
        for n in 0..NODES {
            let out: Vec<u32> =
                cables.outgoing(n as u32).all().await?.iter().map(|c| c.b).collect();
            let inc: Vec<u32> =
                cables.incoming(n as u32).all().await?.iter().map(|c| c.a).collect();
            let expected: Vec<u32> =
                (0..NODES).filter(|m| model.contains(&key(n, *m))).map(|m| m as u32).collect();
            assert_eq!(out, expected, "neighbours of {n}");
            assert_eq!(inc, expected, "incoming of {n}");
            let links = Device::get(&db, n as u32).await?.map(|d| d.links);
            assert_eq!(links, Some(expected.len() as i64), "counter of {n}");
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 16, failure_persistence: None, ..ProptestConfig::default() })]

        #[test]
        fn prop_follows_agree_with_a_model(writes in prop::collection::vec(write(), 1..24)) {
            run(follows(writes)).expect("graph writes");
        }

        #[test]
        fn prop_cables_agree_with_a_model(writes in prop::collection::vec(write(), 1..24)) {
            run(cables(writes)).expect("graph writes");
        }
    }
}
