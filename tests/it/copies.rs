//! Denormalised copies kept from the table's stream (issue 29, item 2): a user's name copied
//! into their posts. Records delivered twice, out of order and in retried batches, a processor
//! killed at every request, writers racing the copy with stale names, random workloads; each
//! ends with no stale copy, checked by scan and against an in-memory model. Real records of
//! the streams API, on the embedded engine or `DDB_ENDPOINT`.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use ddb_model::local;
use ddb_model::prelude::*;
use ddb_model::stats::Op;
use ddb_model::stream::aggregate::{CopyProcessor, FieldCopy};
use ddb_model::stream::{StreamRecord, ViewType};
use proptest::prelude::*;
use serde::{Deserialize, Serialize};

use crate::aggregates::{killed, quiet_kills, read_stream, stream_db};

#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(pk = "USER#<id>", sk = "PROFILE")]
struct User {
    id: String,
    name: String,
    #[serde(default)]
    bio: String,
}

/// In the user's partition; `author_name` is the copy.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(pk = "USER#<author>", sk = "POST#<seq>")]
struct Post {
    author: String,
    seq: u32,
    author_name: String,
    body: String,
}

type Names = FieldCopy<User, Post, String>;

fn author_names(name: &'static str) -> Names {
    FieldCopy::new(
        name,
        |u: &User| u.name.clone(),
        Post::AUTHOR_NAME,
        |db, u: &User| Post::partition(db, &u.id),
        |p: &Post| Some(User::key(&p.author)),
    )
}

fn user(id: &str, name: &str) -> User {
    User { id: id.into(), name: name.into(), bio: String::new() }
}

fn post(author: &str, seq: u32, author_name: &str) -> Post {
    Post {
        author: author.into(),
        seq,
        author_name: author_name.into(),
        body: format!("post {seq}"),
    }
}

/// Users renamed while their posts are written, one post with the name its writer read
/// before the rename, a deleted post.
async fn workload(db: &Db) -> Result<(), Error> {
    user("ann", "Ann").create(db).await?;
    user("bob", "Bob").create(db).await?;
    for (author, seq, name) in [("ann", 1, "Ann"), ("ann", 2, "Ann"), ("bob", 1, "Bob")] {
        post(author, seq, name).create(db).await?;
    }
    User::update(db, "ann").set(User::NAME, "Ann B.".to_owned()).await?;
    post("ann", 3, "Ann").create(db).await?; // read before the rename
    post("bob", 2, "Bob").create(db).await?;
    User::update(db, "bob").set(User::NAME, "Robert".to_owned()).await?;
    Post::delete(db, "ann", 2).await?;
    Ok(())
}

/// Every post's copied name, by (author, seq).
async fn names(db: &Db) -> BTreeMap<(String, u32), String> {
    let mut out = BTreeMap::new();
    for author in ["ann", "bob"] {
        for p in Post::partition(db, author).consistent().all().await.expect("posts") {
            out.insert((p.author, p.seq), p.author_name);
        }
    }
    out
}

fn expected() -> BTreeMap<(String, u32), String> {
    [(("ann", 1), "Ann B."), (("ann", 3), "Ann B."), (("bob", 1), "Robert"), (("bob", 2), "Robert")]
        .into_iter()
        .map(|((a, s), n)| ((a.to_owned(), s), n.to_owned()))
        .collect()
}

/// The records of the stream that are not in `seen`, which then holds them too.
async fn new_records(db: &Db, seen: &mut HashSet<String>) -> Vec<StreamRecord> {
    let all = read_stream(db).await;
    all.into_iter().filter(|r| seen.insert(r.event_id.clone().expect("an event id"))).collect()
}

#[tokio::test]
async fn duplicated_reordered_and_retried_deliveries_leave_no_stale_copy() -> Result<(), Error> {
    let db = stream_db().await;
    workload(&db).await?;
    let copy = author_names("author_names");
    // Every post carries its author's old name: ann's 1 and 3, bob's 1 and 2.
    assert_eq!(copy.stale(&db).await?.len(), 4);
    let mut seen = HashSet::new();
    let records = new_records(&db, &mut seen).await;
    let processor = CopyProcessor::new(&db, &copy, ViewType::NewAndOldImages)?;
    // Newest first, in batches of two, then the whole batch twice (a retried Lambda batch).
    let reversed: Vec<StreamRecord> = records.iter().rev().cloned().collect();
    for chunk in reversed.chunks(2) {
        processor.apply(chunk).await?;
    }
    let again = processor.apply(&records).await?;
    assert_eq!((again.applied, again.targets_written), (0, 0), "{again:?}");
    processor.apply(&records).await?;
    assert_eq!(copy.stale(&db).await?, Vec::<String>::new());
    assert_eq!(names(&db).await, expected());

    // The processor's own writes are in the stream: with old images they cost nothing.
    let own = new_records(&db, &mut seen).await;
    assert!(!own.is_empty());
    let before = db.requests();
    let applied = processor.apply(&own).await?;
    assert_eq!((db.requests() - before).total(), 0, "{applied:?}");
    assert_eq!(applied.applied, 0);
    Ok(())
}

#[tokio::test]
async fn requests_per_change_of_a_source_and_of_a_target() -> Result<(), Error> {
    let db = stream_db().await;
    workload(&db).await?;
    let copy = author_names("counted");
    let processor = CopyProcessor::new(&db, &copy, ViewType::NewAndOldImages)?;
    let mut seen = HashSet::new();
    processor.apply(&new_records(&db, &mut seen).await).await?;
    let _own = new_records(&db, &mut seen).await;

    // A rename of a user with two posts.
    User::update(&db, "ann").set(User::NAME, "Ann C.".to_owned()).await?;
    let rename = new_records(&db, &mut seen).await;
    assert_eq!(rename.len(), 1);
    let before = db.requests();
    let applied = processor.apply(&rename).await?;
    let spent = db.requests() - before;
    let counts = [Op::GetItem, Op::PutItem, Op::Query, Op::UpdateItem].map(|op| spent.get(op));
    // The state read and written, one query, two posts, the state marked done.
    assert_eq!(counts, [1, 1, 1, 3], "{applied:?}");
    assert_eq!((applied.applied, applied.targets_written), (1, 2));
    // Delivered again: the state read, nothing else.
    let before = db.requests();
    assert_eq!(processor.apply(&rename).await?.stale, 1);
    assert_eq!((db.requests() - before).total(), 1);

    // A change that leaves the name as it is: the state moves, no post is read or written.
    User::update(&db, "ann").set(User::BIO, "hello".to_owned()).await?;
    let bio = new_records(&db, &mut seen).await;
    let before = db.requests();
    let applied = processor.apply(&bio).await?;
    let spent = db.requests() - before;
    assert_eq!((spent.get(Op::GetItem), spent.get(Op::PutItem), spent.total()), (1, 1, 2));
    assert_eq!((applied.applied, applied.targets_written), (1, 0));

    // A post written with a stale name: its source's state read, the post repaired.
    post("ann", 9, "Ann").create(&db).await?;
    let written = new_records(&db, &mut seen).await;
    let written: Vec<_> = written.into_iter().filter(|r| r.event_name == "INSERT").collect();
    let before = db.requests();
    let applied = processor.apply(&written).await?;
    let spent = db.requests() - before;
    assert_eq!((spent.get(Op::GetItem), spent.get(Op::UpdateItem), spent.total()), (1, 1, 2));
    assert_eq!((applied.applied, applied.targets_written), (1, 1));
    assert_eq!(Post::get(&db, "ann", 9).await?.map(|p| p.author_name), Some("Ann C.".into()));
    assert!(copy.stale(&db).await?.is_empty());
    Ok(())
}

#[tokio::test]
async fn what_cannot_be_applied_is_refused_before_writing() -> Result<(), Error> {
    let db = stream_db().await;
    let copy = author_names("refusals");
    let keys_only = CopyProcessor::new(&db, &copy, ViewType::KeysOnly).err();
    assert!(keys_only.is_some_and(|e| e.is_aggregate_problem()));
    let bad = author_names("not a name");
    let refused = CopyProcessor::new(&db, &bad, ViewType::NewImage).err();
    assert!(refused.is_some_and(|e| e.is_aggregate_problem()));

    user("ann", "Ann").create(&db).await?;
    let mut records = read_stream(&db).await;
    records[0].dynamodb.sequence_number = None;
    let processor = CopyProcessor::new(&db, &copy, ViewType::NewImage)?;
    let before = db.requests();
    assert!(processor.apply(&records).await.is_err_and(|e| e.is_aggregate_problem()));
    records[0].dynamodb.new_image = None;
    assert!(processor.apply(&records).await.is_err_and(|e| e.is_aggregate_problem()));
    assert_eq!((db.requests() - before).total(), 0, "nothing sent");
    Ok(())
}

/// Runs the processor of `copy` over `records` in a task killed at its request `at` (0:
/// never); true when it was killed.
async fn run_killed(
    db: &Db,
    copy: &Arc<Names>,
    records: &Arc<Vec<StreamRecord>>,
    at: u64,
    after: bool,
) -> Result<bool, Error> {
    let (records, copy) = (records.clone(), copy.clone());
    killed(db, at, after, async move |db| {
        CopyProcessor::new(&db, &*copy, ViewType::NewAndOldImages)?
            .apply(&records)
            .await
            .map(|_| ())
    })
    .await
}

/// The posts as their writers left them: ann's with her first name.
async fn reset_posts(db: &Db) -> Result<(), Error> {
    for (author, seq, name) in [("ann", 1, "Ann"), ("ann", 3, "Ann"), ("bob", 1, "Bob")] {
        post(author, seq, name).put(db).await?;
    }
    post("bob", 2, "Bob").put(db).await
}

#[tokio::test]
async fn a_processor_killed_at_every_request_finishes_the_copy() -> Result<(), Error> {
    quiet_kills();
    let db = stream_db().await;
    workload(&db).await?;
    let records = Arc::new(read_stream(&db).await);
    let reference = Arc::new(author_names("reference"));
    let before = db.requests();
    assert!(!run_killed(&db, &reference, &records, 0, false).await?);
    let requests = (db.requests() - before).total();
    assert!(requests >= 12, "{requests} requests");
    assert_eq!(names(&db).await, expected());

    // Killed at each request (before it is sent, or after it was applied and its answer
    // lost), then the same batch again, to the end.
    let mut kills = 0;
    for after in [false, true] {
        for at in 1..=requests {
            reset_posts(&db).await?;
            let name: &'static str =
                Box::leak(format!("k{}_{at}", u8::from(after)).into_boxed_str());
            let copy = Arc::new(author_names(name));
            kills += u32::from(run_killed(&db, &copy, &records, at, after).await?);
            assert!(!run_killed(&db, &copy, &records, 0, after).await?);
            assert_eq!(copy.stale(&db).await?, Vec::<String>::new(), "{name}");
            assert_eq!(names(&db).await, expected(), "{name}");
        }
    }
    assert_eq!(u64::from(kills), 2 * requests);
    Ok(())
}

#[tokio::test]
async fn a_rebuild_fills_the_copies_and_records_apply_on_top() -> Result<(), Error> {
    let db = stream_db().await;
    workload(&db).await?;
    // Written before the copy existed: every post carries its author's old name.
    let copy = author_names("rebuilt");
    let rebuilt = copy.rebuild(&db).await?;
    assert_eq!((rebuilt.sources, rebuilt.targets_written, rebuilt.sources_skipped), (2, 4, 0));
    assert!(copy.stale(&db).await?.is_empty());
    assert_eq!(names(&db).await, expected());
    assert_eq!(copy.rebuild(&db).await?.targets_written, 0, "nothing left to copy");

    // The stream's records then apply on top: the rebuild does not know the stream's
    // position (its states are at the start), so the users' records are newer; their names
    // are the ones copied, so they move the states and write no post.
    let mut seen = HashSet::new();
    let processor = CopyProcessor::new(&db, &copy, ViewType::NewAndOldImages)?;
    let records = new_records(&db, &mut seen).await;
    let old = processor.apply(&records).await?;
    assert_eq!((old.applied, old.targets_written), (2, 0), "{old:?}");
    assert_eq!(names(&db).await, expected());
    assert_eq!(processor.apply(&records).await?.targets_written, 0);
    User::update(&db, "bob").set(User::NAME, "Bobby".to_owned()).await?;
    let newer = processor.apply(&new_records(&db, &mut seen).await).await?;
    assert_eq!(newer.targets_written, 2, "{newer:?}");
    assert!(copy.stale(&db).await?.is_empty());
    Ok(())
}

#[tokio::test]
async fn draining_the_stream_keeps_the_copies() -> Result<(), Error> {
    let db = stream_db().await;
    workload(&db).await?;
    let copy = author_names("drained");
    let streams = local::streams_client_for(&local::endpoint()?);
    let listed = streams.list_streams().table_name(db.table_name()).send().await.expect("list");
    let arn = listed.streams()[0].stream_arn().expect("stream arn").to_owned();
    let processor = CopyProcessor::new(&db, &copy, ViewType::NewAndOldImages)?;
    let first = processor.drain(&streams, &arn).await?;
    assert!(first.applied.applied >= 2, "{first:?}");
    assert_eq!(names(&db).await, expected());
    // Its own writes, read by the next drain, are ignored and move no checkpoint.
    let second = processor.drain(&streams, &arn).await?;
    assert_eq!((second.applied.applied, second.applied.targets_written), (0, 0), "{second:?}");
    User::update(&db, "ann").set(User::NAME, "Annie".to_owned()).await?;
    let third = processor.drain(&streams, &arn).await?;
    assert_eq!(third.applied.targets_written, 2, "{third:?}");
    assert!(copy.stale(&db).await?.is_empty());
    Ok(())
}

#[tokio::test]
async fn writers_racing_renames_and_the_processor_leave_no_stale_copy() -> Result<(), Error> {
    let db = stream_db().await;
    let copy = Arc::new(author_names("raced"));
    for u in 0..2 {
        user(&format!("r{u}"), "name 0").create(&db).await?;
    }
    let rounds: usize =
        std::env::var("DDB_COPY_RACE_ROUNDS").ok().and_then(|v| v.parse().ok()).unwrap_or(12);
    // Each writer reads its user's name, then writes a post with it: a rename in between
    // leaves the post stale until the processor repairs it.
    let writers: Vec<_> = (0..2)
        .map(|u| {
            let db = db.clone();
            tokio::spawn(async move {
                for seq in 0..rounds as u32 {
                    let author = format!("r{u}");
                    let read = User::get(&db, &author).await?.expect("the user").name;
                    // Long enough for a rename and its copy to come in between.
                    tokio::time::sleep(std::time::Duration::from_millis(3)).await;
                    post(&author, seq % 5, &read).put(&db).await?;
                }
                Ok::<(), Error>(())
            })
        })
        .collect();
    let renamer = {
        let db = db.clone();
        tokio::spawn(async move {
            for n in 1..=rounds {
                User::update(&db, format!("r{}", n % 2))
                    .set(User::NAME, format!("name {n}"))
                    .await?;
                tokio::time::sleep(std::time::Duration::from_millis(2)).await;
            }
            Ok::<(), Error>(())
        })
    };
    let streams = local::streams_client_for(&local::endpoint()?);
    let listed = streams.list_streams().table_name(db.table_name()).send().await.expect("list");
    let arn = listed.streams()[0].stream_arn().expect("stream arn").to_owned();
    let processor = CopyProcessor::new(&db, &*copy, ViewType::NewAndOldImages)?;
    // The processor drains while the writers write.
    while !(renamer.is_finished() && writers.iter().all(|w| w.is_finished())) {
        processor.drain(&streams, &arn).await?;
    }
    for task in writers.into_iter().chain([renamer]) {
        task.await.expect("a task")?;
    }
    // Then until the stream is quiet: a drain that writes no target.
    for _ in 0..5 {
        if processor.drain(&streams, &arn).await?.applied.targets_written == 0 {
            break;
        }
    }
    assert_eq!(copy.stale(&db).await?, Vec::<String>::new());
    for u in 0..2 {
        let author = format!("r{u}");
        let name = User::get(&db, &author).await?.expect("the user").name;
        for p in Post::partition(&db, &author).consistent().all().await? {
            assert_eq!(p.author_name, name, "{p:?}");
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Random workloads: users created, renamed and deleted while posts are written with the name
// their writer read (possibly stale); the stream delivered shuffled, duplicated and in random
// batches, then the processor's own writes fed back until the stream is quiet.

#[derive(Debug, Clone)]
enum Step {
    PutUser {
        user: u8,
        name: u8,
    },
    Rename {
        user: u8,
        name: u8,
    },
    DeleteUser {
        user: u8,
    },
    PutPost {
        user: u8,
        seq: u32,
        name: u8,
    },
    /// An update of the copied field alone (the copy's sequence number kept).
    EditPost {
        user: u8,
        seq: u32,
        name: u8,
    },
    DeletePost {
        user: u8,
        seq: u32,
    },
}

fn step() -> impl Strategy<Value = Step> {
    let (user, seq, name) = (0..3u8, 0..4u32, 0..4u8);
    prop_oneof![
        2 => (user.clone(), name.clone()).prop_map(|(user, name)| Step::PutUser { user, name }),
        3 => (user.clone(), name.clone()).prop_map(|(user, name)| Step::Rename { user, name }),
        1 => user.clone().prop_map(|user| Step::DeleteUser { user }),
        4 => (user.clone(), seq.clone(), name.clone())
            .prop_map(|(user, seq, name)| Step::PutPost { user, seq, name }),
        2 => (user.clone(), seq.clone(), name)
            .prop_map(|(user, seq, name)| Step::EditPost { user, seq, name }),
        1 => (user, seq).prop_map(|(user, seq)| Step::DeletePost { user, seq }),
    ]
}

fn id(user: u8) -> String {
    format!("u{user}")
}

fn name_of(name: u8) -> String {
    format!("name {name}")
}

/// Runs a step; `users` and `posts` are the model.
async fn run_step(
    db: &Db,
    step: &Step,
    users: &mut BTreeMap<String, String>,
    posts: &mut HashSet<(u8, u32)>,
) -> Result<(), Error> {
    {
        match *step {
            Step::PutUser { user, name } => {
                User { id: id(user), name: name_of(name), bio: String::new() }.put(db).await?;
                users.insert(id(user), name_of(name));
            }
            Step::Rename { user, name } => {
                if let Some(held) = users.get_mut(&id(user)) {
                    User::update(db, id(user)).set(User::NAME, name_of(name)).await?;
                    *held = name_of(name);
                }
            }
            Step::DeleteUser { user } => {
                if users.remove(&id(user)).is_some() {
                    User::delete(db, id(user)).await?;
                }
            }
            Step::PutPost { user, seq, name } => {
                post(&id(user), seq, &name_of(name)).put(db).await?;
                posts.insert((user, seq));
            }
            Step::EditPost { user, seq, name } => {
                if posts.contains(&(user, seq)) {
                    Post::update(db, id(user), seq).set(Post::AUTHOR_NAME, name_of(name)).await?;
                }
            }
            Step::DeletePost { user, seq } => {
                posts.remove(&(user, seq));
                Post::delete(db, id(user), seq).await?;
            }
        }
    }
    Ok(())
}

fn cases() -> u32 {
    std::env::var("DDB_AGGREGATE_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(6)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn prop_random_workloads_and_deliveries_leave_no_stale_copy(
        steps in prop::collection::vec((step(), prop::bool::weighted(0.3)), 1..24),
        order_seed in any::<u64>(),
        batch in 1..6usize,
        duplicates in 0..3usize,
    ) {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build();
        let result: Result<(), Error> = runtime.expect("runtime").block_on(async {
            let db = stream_db().await;
            let copy = author_names("prop");
            let processor = CopyProcessor::new(&db, &copy, ViewType::NewAndOldImages)?;
            let mut seen = HashSet::new();
            // The records so far shuffled (a seeded permutation), duplicated and in batches:
            // where a step says so, and at the end until the stream has no new record (the
            // processor's own writes are records too).
            let deliver = async |seen: &mut HashSet<String>| -> Result<bool, Error> {
                let records = new_records(&db, seen).await;
                let mut delivered: Vec<(u64, StreamRecord)> = Vec::new();
                for copy in 0..=duplicates as u64 {
                    for (i, r) in records.iter().enumerate() {
                        let rank = (i as u64 + 1).wrapping_mul(order_seed | 1).wrapping_add(copy).rotate_left(17);
                        delivered.push((rank, r.clone()));
                    }
                }
                delivered.sort_by_key(|(rank, _)| *rank);
                let delivered: Vec<StreamRecord> = delivered.into_iter().map(|(_, r)| r).collect();
                for chunk in delivered.chunks(batch) {
                    processor.apply(chunk).await?;
                }
                Ok(!records.is_empty())
            };
            let mut users = BTreeMap::new();
            let mut posts = HashSet::new();
            for (step, process) in &steps {
                run_step(&db, step, &mut users, &mut posts).await?;
                if *process {
                    deliver(&mut seen).await?;
                }
            }
            let mut rounds = 0;
            while deliver(&mut seen).await? {
                rounds += 1;
                assert!(rounds <= 4, "the stream keeps growing");
            }
            assert_eq!(copy.stale(&db).await?, Vec::<String>::new());
            // Every post of a user the model holds carries the user's name.
            for (user, name) in &users {
                for p in Post::partition(&db, user).consistent().all().await? {
                    assert_eq!(&p.author_name, name, "{p:?}");
                }
            }
            Ok(())
        });
        prop_assert!(result.is_ok(), "{result:?}");
    }
}

#[tokio::test]
async fn the_model_tool_rebuilds_a_copy() -> Result<(), Error> {
    use ddb_model::DefaultTable;
    use ddb_model::tooling::TableModel;
    use ddb_model::tooling::aggregate::RebuildAggregate;
    use ddb_model::tooling::cli::Cli;

    let db = crate::support::db::<DefaultTable>().await;
    workload(&db).await?;
    let copy = author_names("tool_copy");
    let cli = Cli::new(TableModel::of::<DefaultTable>().entity::<User>().entity::<Post>())
        .migration(RebuildAggregate::copy(copy.clone()));
    let mut out = Vec::new();
    cli.run_with(&["rebuild"].map(String::from), &mut out).await.expect("list");
    assert!(String::from_utf8_lossy(&out).starts_with("tool_copy\t"), "{out:?}");
    let endpoint = local::endpoint()?;
    let run = ["rebuild", "tool_copy", "--endpoint", &endpoint, "--table", db.table_name()]
        .map(String::from);
    cli.run_with(&run, &mut Vec::new()).await.expect("rebuild");
    assert!(copy.stale(&db).await?.is_empty());
    assert_eq!(names(&db).await, expected());
    Ok(())
}
