//! Recovery fences the old writer (issue 13, item 10): a request of a large operation's
//! writer is held at the HTTP layer (as a paused process's, or a killed container's
//! in-flight request), recovery (`resume` or `rollback`) runs from another `Db`, users write,
//! then the held request is released. It must not land, and the woken-up writer stops with
//! `TreeProblem::Superseded`.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use aws_smithy_runtime_api::client::http::{
    HttpClient, HttpConnector, HttpConnectorFuture, HttpConnectorSettings, SharedHttpClient,
    SharedHttpConnector,
};
use aws_smithy_runtime_api::client::orchestrator::HttpRequest;
use aws_smithy_runtime_api::client::result::ConnectorError;
use aws_smithy_runtime_api::client::runtime_components::RuntimeComponents;
use ddb_model::aws_sdk_dynamodb::config::retry::RetryConfig;
use ddb_model::aws_sdk_dynamodb::config::{BehaviorVersion, Credentials, Region};
use ddb_model::aws_sdk_dynamodb::{Client, Config};
use ddb_model::prelude::*;
use ddb_model::tree::TreeProblem;
use ddb_model::{DefaultTable, TreePath, local};
use serde::{Deserialize, Serialize};
use tokio::sync::{Notify, Semaphore};

use crate::support::db;

/// A path-tree document with a body a user edits.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(pk = "SPACE#<space>", sk = "DOC#<path>")]
#[hierarchy(path = path, index = gsi1)]
pub struct Doc {
    pub space: String,
    pub path: TreePath,
    pub body: String,
}

/// A closure-tree folder with a body.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(pk = "BOX#<owner>", sk = "ITEM#<id>")]
#[hierarchy(strategy = closure, parent = parent)]
pub struct Boxed {
    pub owner: String,
    pub id: String,
    pub parent: Option<String>,
    pub body: String,
}

/// An adjacency-tree node.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(pk = "ADJ#<owner>", sk = "N#<id>")]
#[hierarchy(strategy = adjacency, parent = parent, index = gsi2)]
pub struct Adj {
    pub owner: String,
    pub id: String,
    pub parent: Option<String>,
    pub body: String,
}

/// Holds the first write request (`BatchWriteItem` or `TransactWriteItems`) whose body
/// contains `marker` and all of `also`, until [`Hold::release`].
pub struct Hold {
    /// The operations (`X-Amz-Target` suffixes) whose requests may be held.
    targets: Vec<&'static str>,
    /// Forward the request, then hold its response and lose it (the SDK retries).
    lose_after: bool,
    marker: String,
    also: Vec<String>,
    /// Which matching request is held (0: the first).
    nth: u64,
    seen: AtomicU64,
    taken: AtomicBool,
    held: Notify,
    release: Semaphore,
}

impl Hold {
    pub fn new(marker: &str, also: &[&str]) -> Arc<Hold> {
        Hold::on(&["BatchWriteItem", "TransactWriteItems"], marker, also)
    }

    /// Holds the first request of one of `targets` whose body contains `marker` and `also`.
    pub fn on(targets: &[&'static str], marker: &str, also: &[&str]) -> Arc<Hold> {
        Hold::build(targets, false, 0, marker, also)
    }

    /// Forwards the `nth` request of one of `targets` (with `marker`), then loses its response
    /// once released: the SDK sends it again.
    pub fn lose(targets: &[&'static str], nth: u64, marker: &str) -> Arc<Hold> {
        Hold::build(targets, true, nth, marker, &[])
    }

    fn build(
        targets: &[&'static str],
        lose_after: bool,
        nth: u64,
        marker: &str,
        also: &[&str],
    ) -> Arc<Hold> {
        Arc::new(Hold {
            targets: targets.to_vec(),
            lose_after,
            marker: marker.to_owned(),
            also: also.iter().map(|s| (*s).to_owned()).collect(),
            nth,
            seen: AtomicU64::new(0),
            taken: AtomicBool::new(false),
            held: Notify::new(),
            release: Semaphore::new(0),
        })
    }

    /// Waits until the request is held.
    pub async fn held(&self) {
        self.held.notified().await;
    }

    /// True when a request was held.
    pub fn was_taken(&self) -> bool {
        self.taken.load(Ordering::SeqCst)
    }

    /// Lets the held request go on to the service.
    pub fn release(&self) {
        self.release.add_permits(1);
    }

    fn matches(&self, request: &HttpRequest) -> bool {
        let target = request.headers().get("x-amz-target").unwrap_or("");
        if !self.targets.iter().any(|t| target.ends_with(&format!(".{t}"))) {
            return false;
        }
        let body = request.body().bytes().map(String::from_utf8_lossy).unwrap_or_default();
        body.contains(&self.marker)
            && self.also.iter().all(|a| body.contains(a.as_str()))
            && self.seen.fetch_add(1, Ordering::SeqCst) == self.nth
    }
}

#[derive(Debug)]
struct Holding {
    inner: SharedHttpClient,
    hold: Arc<Hold>,
}

impl fmt::Debug for Hold {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Hold")
    }
}

impl HttpClient for Holding {
    fn http_connector(
        &self,
        settings: &HttpConnectorSettings,
        components: &RuntimeComponents,
    ) -> SharedHttpConnector {
        let inner = self.inner.http_connector(settings, components);
        SharedHttpConnector::new(HoldingConnector { inner, hold: Arc::clone(&self.hold) })
    }
}

#[derive(Debug)]
struct HoldingConnector {
    inner: SharedHttpConnector,
    hold: Arc<Hold>,
}

impl HttpConnector for HoldingConnector {
    fn call(&self, request: HttpRequest) -> HttpConnectorFuture {
        let hold = Arc::clone(&self.hold);
        let inner = self.inner.clone();
        HttpConnectorFuture::new(async move {
            if hold.matches(&request) && !hold.taken.swap(true, Ordering::SeqCst) {
                if hold.lose_after {
                    let _applied = inner.call(request).await;
                    hold.held.notify_one();
                    let _permit = hold.release.acquire().await;
                    return Err(ConnectorError::io(
                        "injected: response lost after the write".into(),
                    ));
                }
                hold.held.notify_one();
                let _permit = hold.release.acquire().await;
            }
            inner.call(request).await
        })
    }
}

/// A `Db` on `clean`'s table whose matching request `hold` holds (the SDK's retries of it,
/// after a transient failure of the service, are not held again).
pub fn holding_db<T: ddb_model::Table>(clean: &Db<T>, hold: &Arc<Hold>) -> Db<T> {
    holding_db_with(clean, hold, 3)
}

/// [`holding_db`] whose SDK makes up to `attempts` attempts per request.
pub fn holding_db_with<T: ddb_model::Table>(
    clean: &Db<T>,
    hold: &Arc<Hold>,
    attempts: u32,
) -> Db<T> {
    let endpoint = local::endpoint().expect("endpoint");
    let inner = aws_smithy_http_client::Builder::new().build_http();
    let config = Config::builder()
        .behavior_version(BehaviorVersion::latest())
        .region(Region::new("us-east-1"))
        .credentials_provider(Credentials::new("local", "local", None, None, "test"))
        .endpoint_url(endpoint)
        .http_client(Holding { inner, hold: Arc::clone(hold) })
        .retry_partition(crate::support::own_retry_partition())
        .retry_config(
            RetryConfig::standard()
                .with_max_attempts(attempts)
                .with_initial_backoff(std::time::Duration::from_millis(1)),
        )
        .build();
    Db::with_table_name(Client::from_conf(config), clean.table_name())
}

fn p(text: &str) -> TreePath {
    text.parse().expect("a valid path")
}

fn superseded(err: &Error) -> bool {
    matches!(err, Error::Tree { problem: TreeProblem::Superseded { .. }, .. })
}

/// `src`, `dst` and a 120-node subtree at `src/w` (more than one transaction moves).
async fn doc_tree(db: &Db, space: &str) -> BTreeMap<String, String> {
    let tree = Doc::tree(db, space);
    let mut paths = vec!["src".to_owned(), "dst".to_owned(), "src/w".to_owned()];
    for i in 0..12 {
        paths.push(format!("src/w/c{i:02}"));
        for j in 0..9 {
            paths.push(format!("src/w/c{i:02}/g{j}"));
        }
    }
    let docs: Vec<Doc> = paths
        .iter()
        .map(|path| Doc { space: space.into(), path: p(path), body: format!("old {path}") })
        .collect();
    tree.insert(&docs[0]).await.expect("src");
    tree.insert(&docs[1]).await.expect("dst");
    db.batch_put(&docs[2..]).await.expect("setup");
    docs.into_iter().map(|d| (d.path.to_string(), d.body)).collect()
}

async fn docs(db: &Db, space: &str) -> BTreeMap<String, String> {
    let nodes = Doc::tree(db, space).nodes().consistent().all().await.expect("nodes");
    nodes.into_iter().map(|d| (d.path.to_string(), d.body)).collect()
}

fn rebased(tree: &BTreeMap<String, String>, from: &str, to: &str) -> BTreeMap<String, String> {
    tree.iter()
        .map(|(path, body)| match path.strip_prefix(from) {
            Some(rest) if rest.is_empty() || rest.starts_with('/') => {
                (format!("{to}{rest}"), body.clone())
            }
            _ => (path.clone(), body.clone()),
        })
        .collect()
}

/// How a path move is started: `move_subtree` to another parent or `rename`.
#[derive(Clone, Copy)]
enum Moving {
    Move,
    Rename,
}

impl Moving {
    fn to(self) -> &'static str {
        match self {
            Moving::Move => "dst/moved",
            Moving::Rename => "src/moved",
        }
    }
}

fn start_move(
    slow: Db,
    space: &'static str,
    how: Moving,
) -> tokio::task::JoinHandle<Result<ddb_model::tree::OpReport, Error>> {
    tokio::spawn(async move {
        let tree = Doc::tree(&slow, space);
        match how {
            Moving::Move => tree.move_subtree(&p("src/w"), &p("dst/moved")).await,
            Moving::Rename => tree.rename(&p("src/w"), "moved").await,
        }
    })
}

/// Resume while a copy request of the mover is held; users then edit every moved node; the
/// held copy is released: it must not overwrite the users' edits.
async fn path_move_resumed(space: &'static str, how: Moving) -> Result<(), Error> {
    let clean = db::<DefaultTable>().await;
    let before = doc_tree(&clean, space).await;
    let hold = Hold::new("moved", &[]);
    let mover = start_move(holding_db(&clean, &hold), space, how);
    hold.held().await;

    let tree = Doc::tree(&clean, space);
    let report = tree.resume(|_| {}).await?.expect("an operation to resume");
    assert_eq!(report.nodes, 121);
    let mut expected = rebased(&before, "src/w", how.to());
    for (path, body) in expected.iter_mut().filter(|(path, _)| path.contains("moved")) {
        Doc::update(&clean, space, p(path)).set(Doc::BODY, format!("user {path}")).await?;
        *body = format!("user {path}");
    }

    hold.release();
    let result = mover.await.expect("the mover task");
    assert_eq!(docs(&clean, space).await, expected, "the late copy did not land");
    let err = result.unwrap_err();
    assert!(superseded(&err), "the woken-up mover stops: {err:?}");
    assert!(tree.pending().await?.is_none());
    Ok(())
}

#[tokio::test]
async fn a_held_copy_of_a_resumed_move_does_not_land() -> Result<(), Error> {
    path_move_resumed("m", Moving::Move).await
}

#[tokio::test]
async fn a_held_copy_of_a_resumed_rename_does_not_land() -> Result<(), Error> {
    path_move_resumed("r", Moving::Rename).await
}

#[tokio::test]
async fn a_held_copy_of_a_rolled_back_move_does_not_land() -> Result<(), Error> {
    let clean = db::<DefaultTable>().await;
    let before = doc_tree(&clean, "rb").await;
    let hold = Hold::new("moved", &[]);
    let mover = start_move(holding_db(&clean, &hold), "rb", Moving::Move);
    hold.held().await;

    let tree = Doc::tree(&clean, "rb");
    tree.rollback().await?.expect("an operation to roll back");
    assert_eq!(docs(&clean, "rb").await, before);

    hold.release();
    let result = mover.await.expect("the mover task");
    assert_eq!(docs(&clean, "rb").await, before, "no stray copy");
    let err = result.unwrap_err();
    assert!(superseded(&err), "the woken-up mover stops: {err:?}");
    assert!(tree.pending().await?.is_none());
    Ok(())
}

/// A delete whose first remove request is held; `resume` finishes it, a user creates the
/// subtree again; the held delete must not remove the user's nodes.
#[tokio::test]
async fn a_held_delete_of_a_resumed_delete_does_not_land() -> Result<(), Error> {
    let clean = db::<DefaultTable>().await;
    let before = doc_tree(&clean, "d").await;
    let hold = Hold::new("Delete", &["g8"]);
    let slow = holding_db(&clean, &hold);
    let deleter =
        tokio::spawn(async move { Doc::tree(&slow, "d").delete_subtree(&p("src/w")).await });
    hold.held().await;

    let tree = Doc::tree(&clean, "d");
    tree.resume(|_| {}).await?.expect("an operation to resume");
    let mut again: Vec<(&String, &String)> =
        before.iter().filter(|(path, _)| path.starts_with("src/w")).collect();
    again.sort_by_key(|(path, _)| path.matches('/').count());
    for (path, _) in &again {
        tree.insert(&Doc { space: "d".into(), path: p(path), body: "user".into() }).await?;
    }
    let expected: BTreeMap<String, String> = before
        .iter()
        .map(|(path, body)| {
            let body = if path.starts_with("src/w") { "user".to_owned() } else { body.clone() };
            (path.clone(), body)
        })
        .collect();

    hold.release();
    let result = deleter.await.expect("the deleter task");
    assert_eq!(docs(&clean, "d").await, expected, "the late delete did not land");
    let err = result.unwrap_err();
    assert!(superseded(&err), "the woken-up deleter stops: {err:?}");
    Ok(())
}

/// `src` and `zdst` at the top, `w` under `src` with 40 nodes below it.
async fn boxed_tree(db: &Db, owner: &str) -> Vec<Boxed> {
    let tree = Boxed::tree(db, owner);
    let node = |id: &str, parent: Option<&str>| Boxed {
        owner: owner.into(),
        id: id.into(),
        parent: parent.map(Into::into),
        body: format!("old {id}"),
    };
    let mut nodes = vec![node("src", None), node("zdst", None), node("w", Some("src"))];
    for i in 0..8 {
        let child = format!("w-c{i}");
        nodes.push(node(&child, Some("w")));
        for j in 0..4 {
            nodes.push(node(&format!("{child}-g{j}"), Some(&child)));
        }
    }
    for n in &nodes {
        tree.insert(n).await.expect("setup");
    }
    nodes
}

async fn boxed_bodies(db: &Db, owner: &str, root: &str) -> BTreeMap<String, String> {
    let below = Boxed::tree(db, owner).descendants(root).query().consistent().all().await;
    below.expect("descendants").into_iter().map(|n| (n.id, n.body)).collect()
}

/// A closure move whose copy transaction is held; `resume` finishes the move and users edit
/// every moved node; the held copies must not overwrite the edits.
#[tokio::test]
async fn a_held_copy_of_a_resumed_closure_move_does_not_land() -> Result<(), Error> {
    let clean = db::<DefaultTable>().await;
    let nodes = boxed_tree(&clean, "cm").await;
    let hold = Hold::new("zdst", &[]);
    let slow = holding_db(&clean, &hold);
    let mover = tokio::spawn(async move {
        Boxed::tree(&slow, "cm").move_subtree("w", "zdst").transaction_limit(0).await
    });
    hold.held().await;

    let tree = Boxed::tree(&clean, "cm");
    tree.resume(|_| {}).await?.expect("an operation to resume");
    let mut expected = BTreeMap::new();
    for n in nodes.iter().filter(|n| n.id.starts_with('w')) {
        let mut edited = tree.get(n.id.as_str()).await?.expect("moved node");
        edited.body = format!("user {}", n.id);
        tree.replace(&edited).await?;
        expected.insert(n.id.clone(), edited.body.clone());
    }
    assert_eq!(boxed_bodies(&clean, "cm", "zdst").await, expected);

    hold.release();
    let result = mover.await.expect("the mover task");
    assert_eq!(boxed_bodies(&clean, "cm", "zdst").await, expected, "the late copies did not land");
    let err = result.unwrap_err();
    assert!(superseded(&err), "the woken-up mover stops: {err:?}");
    assert!(tree.pending().await?.is_none());
    Ok(())
}

#[tokio::test]
async fn a_held_copy_of_a_rolled_back_closure_move_does_not_land() -> Result<(), Error> {
    let clean = db::<DefaultTable>().await;
    boxed_tree(&clean, "cr").await;
    let before = crate::support::snapshot(&clean).await;
    let hold = Hold::new("zdst", &[]);
    let slow = holding_db(&clean, &hold);
    let mover = tokio::spawn(async move {
        Boxed::tree(&slow, "cr").move_subtree("w", "zdst").transaction_limit(0).await
    });
    hold.held().await;

    Boxed::tree(&clean, "cr").rollback().await?.expect("an operation to roll back");
    hold.release();
    let result = mover.await.expect("the mover task");
    assert_eq!(crate::support::snapshot(&clean).await, before, "no stray copy");
    let err = result.unwrap_err();
    assert!(superseded(&err), "the woken-up mover stops: {err:?}");
    Ok(())
}

/// An adjacency delete whose first transaction is held; `resume` finishes it and a user
/// inserts the nodes again; the held deletes must not remove them.
#[tokio::test]
async fn a_held_delete_of_a_resumed_adjacency_delete_does_not_land() -> Result<(), Error> {
    let clean = db::<DefaultTable>().await;
    let tree = Adj::tree(&clean, "ad");
    let node = |id: &str, parent: Option<&str>, body: &str| Adj {
        owner: "ad".into(),
        id: id.into(),
        parent: parent.map(Into::into),
        body: body.into(),
    };
    let mut ids = vec![("top".to_owned(), None), ("r".to_owned(), Some("top".to_owned()))];
    for i in 0..10 {
        ids.push((format!("c{i}"), Some("r".to_owned())));
        for j in 0..10 {
            ids.push((format!("c{i}-g{j}"), Some(format!("c{i}"))));
        }
    }
    for (id, parent) in &ids {
        tree.insert(&node(id, parent.as_deref(), "old")).await?;
    }
    let hold = Hold::new("Delete", &[]);
    let slow = holding_db(&clean, &hold);
    let deleter = tokio::spawn(async move { Adj::tree(&slow, "ad").delete_subtree("r").await });
    hold.held().await;

    tree.resume(|_| {}).await?.expect("an operation to resume");
    for (id, parent) in ids.iter().skip(1) {
        tree.insert(&node(id, parent.as_deref(), "user")).await?;
    }

    hold.release();
    let result = deleter.await.expect("the deleter task");
    let mut expected: Vec<String> = ids.iter().skip(1).map(|(id, _)| id.clone()).collect();
    expected.sort();
    let mut found: Vec<String> =
        tree.descendants("top").all().await?.into_iter().map(|n| n.id).collect();
    found.sort();
    assert_eq!(found, expected, "the late deletes did not land");
    assert_eq!(tree.subtree_size("top").await?, 112);
    let err = result.unwrap_err();
    assert!(superseded(&err), "the woken-up deleter stops: {err:?}");
    Ok(())
}

// -------------------------------------------------------------------------------------------
// Concurrency holes (issue 13, item 11)
// -------------------------------------------------------------------------------------------

/// An adjacency move of X whose transaction is held while a child moves out of X and a user
/// updates X's own fields: the move must not write back X's old child counter or fields.
#[tokio::test]
async fn an_adjacency_move_keeps_concurrent_changes_of_the_node() -> Result<(), Error> {
    let clean = db::<DefaultTable>().await;
    let tree = Adj::tree(&clean, "am");
    let node = |id: &str, parent: Option<&str>| Adj {
        owner: "am".into(),
        id: id.into(),
        parent: parent.map(Into::into),
        body: "old".into(),
    };
    for (id, parent) in
        [("a", None), ("b", None), ("x", Some("a")), ("c1", Some("x")), ("c2", Some("x"))]
    {
        tree.insert(&node(id, parent)).await?;
    }
    let hold = Hold::new("N#x", &[]);
    let slow = holding_db(&clean, &hold);
    let mover = tokio::spawn(async move { Adj::tree(&slow, "am").move_subtree("x", "b").await });
    hold.held().await;

    tree.move_subtree("c1", "a").await?;
    Adj::update(&clean, "am", "x").set(Adj::BODY, "user".to_owned()).await?;
    hold.release();
    mover.await.expect("the mover task")?;

    let x = tree.get("x").await?.expect("x");
    assert_eq!(
        (x.parent.as_deref(), x.body.as_str()),
        (Some("b"), "user"),
        "the user's update stays"
    );
    let kids = crate::support::raw(&clean, "ADJ#am", "N#x").await.expect("x item");
    assert_eq!(kids.get("_tree_kids"), Some(&crate::support::n(1)), "x has one child left");
    let report = tree.delete_subtree("x").await?;
    assert_eq!(report.nodes, 2);
    assert_eq!(tree.subtree_size("b").await?, 1);
    Ok(())
}

/// An insert under a node that a large delete removed, refused by the delete's intent; the
/// delete finishes before the insert reads the intent: the insert is not an unmapped
/// cancellation but `ParentMissing` (tried again against the tree the delete left).
#[tokio::test]
async fn an_insert_refused_by_a_finished_operation_is_mapped() -> Result<(), Error> {
    let clean = db::<DefaultTable>().await;
    doc_tree(&clean, "i").await;
    let hold_clear = Hold::on(&["DeleteItem"], "", &[]);
    let slow = holding_db(&clean, &hold_clear);
    let deleter =
        tokio::spawn(async move { Doc::tree(&slow, "i").delete_subtree(&p("src/w")).await });
    hold_clear.held().await;

    let hold_read = Hold::on(&["GetItem"], "", &[]);
    let reader = holding_db(&clean, &hold_read);
    let inserter = tokio::spawn(async move {
        let doc = Doc { space: "i".into(), path: p("src/w/c00/new"), body: "new".into() };
        Doc::tree(&reader, "i").insert(&doc).await
    });
    hold_read.held().await;
    hold_clear.release();
    assert_eq!(deleter.await.expect("the deleter task")?.nodes, 121);
    hold_read.release();
    let err = inserter.await.expect("the inserter task").unwrap_err();
    assert!(
        matches!(&err, Error::Tree { problem: TreeProblem::ParentMissing { parent }, .. } if parent == &p("src/w/c00")),
        "{err:?}"
    );
    Ok(())
}

const WRITES: [&str; 5] =
    ["PutItem", "UpdateItem", "DeleteItem", "TransactWriteItems", "BatchWriteItem"];

/// Every write request of a large rename, in turn, has its response lost after the service
/// applied it; the SDK sends it again. Each step recognises its own applied write: the
/// rename succeeds and the tree is exactly the renamed tree.
#[tokio::test]
async fn every_step_of_a_large_rename_survives_a_lost_response() -> Result<(), Error> {
    let clean = db::<DefaultTable>().await;
    for k in 0.. {
        let space = format!("k{k}");
        let before = doc_tree(&clean, &space).await;
        let hold = Hold::lose(&WRITES, k, "");
        hold.release();
        let db = holding_db_with(&clean, &hold, 3);
        let report = Doc::tree(&db, &space).rename(&p("src/w"), "moved").await;
        let report = report.unwrap_or_else(|e| panic!("k = {k}: {e}"));
        assert_eq!(report.nodes, 121);
        assert_eq!(docs(&clean, &space).await, rebased(&before, "src/w", "src/moved"), "k = {k}");
        assert!(Doc::tree(&clean, &space).pending().await?.is_none());
        if !hold.was_taken() {
            assert!(k > 5, "the rename sent {k} writes");
            break;
        }
    }
    Ok(())
}

/// The last step of a rename (clearing the intent) is applied, its response lost, and
/// another operation begins before the SDK sends it again: the rename still succeeds, and
/// the other operation's intent stays.
#[tokio::test]
async fn a_rename_whose_last_response_is_lost_succeeds() -> Result<(), Error> {
    let clean = db::<DefaultTable>().await;
    let before = doc_tree(&clean, "l").await;
    let hold = Hold::lose(&["DeleteItem"], 0, "");
    let slow = holding_db_with(&clean, &hold, 3);
    let renamer =
        tokio::spawn(async move { Doc::tree(&slow, "l").rename(&p("src/w"), "moved").await });
    hold.held().await;

    // Another large operation begins (and is held in its first write).
    let other = Hold::new("Delete", &[]);
    let other_db = holding_db(&clean, &other);
    let deleter = tokio::spawn(async move {
        Doc::tree(&other_db, "l").delete_subtree(&p("dst")).transaction_limit(0).await
    });
    other.held().await;
    hold.release();
    let report = renamer.await.expect("the renamer task");
    let pending = Doc::tree(&clean, "l").pending().await?;
    other.release();
    deleter.await.expect("the deleter task")?;
    assert_eq!(report?.nodes, 121);
    assert!(matches!(pending.map(|op| op.kind), Some(ddb_model::tree::OpKind::Delete { .. })));
    let mut expected = rebased(&before, "src/w", "src/moved");
    expected.remove("dst");
    assert_eq!(docs(&clean, "l").await, expected);
    Ok(())
}

/// A closure move reads the node's own copy, then the subtree's own copies; an ancestor of
/// the node moves in between (the second read is held until it did): the move sees the
/// nodes below record new ancestors. That is a conflict, retried, not a corrupt node.
#[tokio::test]
async fn a_closure_move_racing_an_ancestor_move_is_retried_not_corrupt() -> Result<(), Error> {
    let clean = db::<DefaultTable>().await;
    let tree = Boxed::tree(&clean, "cc");
    let node = |id: &str, parent: Option<&str>| Boxed {
        owner: "cc".into(),
        id: id.into(),
        parent: parent.map(Into::into),
        body: id.into(),
    };
    let nodes = [
        ("r", None),
        ("t", None),
        ("a", Some("r")),
        ("x", Some("a")),
        ("x1", Some("x")),
        ("x2", Some("x")),
    ];
    for (id, parent) in nodes {
        tree.insert(&node(id, parent)).await?;
    }
    let hold = Hold::on(&["BatchGetItem"], "", &[]);
    let slow = holding_db(&clean, &hold);
    let mover = tokio::spawn(async move { Boxed::tree(&slow, "cc").move_subtree("x", "t").await });
    hold.held().await;
    tree.move_to_top("a").await?;
    hold.release();
    let report = mover.await.expect("the mover task")?;
    assert_eq!(report.nodes, 3);
    let ids = |nodes: Vec<Boxed>| nodes.into_iter().map(|n| n.id).collect::<Vec<_>>();
    assert_eq!(ids(tree.ancestors("x1").await?), ["t", "x"]);
    assert_eq!(ids(tree.ancestors("x").await?), ["t"]);
    assert_eq!(tree.subtree_size("a").await?, 1);
    assert_eq!(tree.subtree_size("t").await?, 4);
    Ok(())
}

/// A directed link between two named nodes, with its inverse item.
#[derive(Entity, ddb_model::Edge, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(pk = "P#<a>", sk = "LINK#<b>")]
#[edge(from = a, to = b, inverse(pk = "P#<b>", sk = "LINKED#<a>"))]
pub struct Link {
    pub a: String,
    pub b: String,
}

/// `remove_node` whose first chunk is held; the removal is run again from another `Db`
/// (recovery), then the user links the node again; the held chunk must not remove the
/// user's new edges, and the first removal stops with a typed error.
#[tokio::test]
async fn a_held_chunk_of_a_taken_over_remove_node_does_not_land() -> Result<(), Error> {
    let clean = db::<DefaultTable>().await;
    let links = Link::edges(&clean);
    let edges: Vec<Link> =
        (0..40).map(|i| Link { a: "hub".into(), b: format!("n{i:02}") }).collect();
    for e in &edges {
        links.link(e).await?;
    }
    let hold = Hold::new("Delete", &[]);
    let slow = holding_db(&clean, &hold);
    let remover =
        tokio::spawn(async move { Link::edges(&slow).remove_node("hub".to_owned()).await });
    hold.held().await;

    let again = links.remove_node("hub".to_owned()).await?;
    assert!(again.done);
    for e in &edges {
        links.link(e).await?;
    }
    hold.release();
    let result = remover.await.expect("the remover task");
    assert_eq!(links.outgoing("hub".to_owned()).count().await?, 40, "the late chunk did not land");
    assert_eq!(links.incoming("n07".to_owned()).count().await?, 1);
    let err = result.unwrap_err();
    assert!(err.is_condition_failed(), "the woken-up removal stops: {err:?}");
    assert_eq!(crate::support::snapshot(&clean).await.len(), 80, "no fence record left");
    Ok(())
}

/// A large closure delete of `x` between its requests (the entity item gone, the own copy
/// not yet): an insert of a new `x` is refused as busy, not reported as a corrupt node.
#[tokio::test]
async fn an_insert_during_a_large_closure_delete_of_its_id_is_busy() -> Result<(), Error> {
    let clean = db::<DefaultTable>().await;
    let tree = Boxed::tree(&clean, "cd");
    let node = |id: &str, parent: Option<&str>| Boxed {
        owner: "cd".into(),
        id: id.into(),
        parent: parent.map(Into::into),
        body: id.into(),
    };
    for (id, parent) in [("x", None), ("x1", Some("x")), ("x2", Some("x"))] {
        tree.insert(&node(id, parent)).await?;
    }
    let hold = Hold::new("~c#x#000#x", &[]);
    let slow = holding_db(&clean, &hold);
    let deleter = tokio::spawn(async move {
        Boxed::tree(&slow, "cd").delete_subtree("x").transaction_limit(0).await
    });
    hold.held().await;
    let err = tree.insert(&node("x", None)).await.unwrap_err();
    hold.release();
    assert_eq!(deleter.await.expect("the deleter task")?.nodes, 3);
    assert!(
        matches!(&err, Error::Tree { problem: TreeProblem::Busy { .. }, .. }),
        "the insert waits for the delete: {err:?}"
    );
    tree.insert(&node("x", None)).await?;
    assert_eq!(tree.subtree_size("x").await?, 1);
    Ok(())
}

/// The stored child counter of the adjacency node `id` of tree `owner`, and its real number
/// of children.
async fn adj_kids(clean: &Db, owner: &str, id: &str) -> (i64, usize) {
    let item = crate::support::raw(clean, &format!("ADJ#{owner}"), &format!("N#{id}")).await;
    let stored = item
        .as_ref()
        .and_then(|i| i.get("_tree_kids"))
        .and_then(|v| v.as_n().ok())
        .map_or(0, |n| n.parse().expect("a counter"));
    let real = Adj::tree(clean, owner).children(id).all().await;
    (stored, real.expect("children").len())
}

/// An adjacency delete of `p1` whose transaction is held after it read `x` under `p1`;
/// meanwhile `x` is deleted and inserted again under `p2` (the new `x` has the revision the
/// old one was read with). The held delete must not remove the new `x` and leave `p2`
/// counting a child it no longer has.
#[tokio::test]
async fn an_adjacency_delete_does_not_remove_a_node_inserted_again_elsewhere() -> Result<(), Error>
{
    let clean = db::<DefaultTable>().await;
    let tree = Adj::tree(&clean, "ar");
    let node = |id: &str, parent: Option<&str>| Adj {
        owner: "ar".into(),
        id: id.into(),
        parent: parent.map(Into::into),
        body: id.into(),
    };
    for (id, parent) in [("p1", None), ("p2", None), ("x", Some("p1"))] {
        tree.insert(&node(id, parent)).await?;
    }
    let hold = Hold::on(&["TransactWriteItems"], "N#x", &[]);
    let slow = holding_db(&clean, &hold);
    let deleter = tokio::spawn(async move { Adj::tree(&slow, "ar").delete_subtree("p1").await });
    hold.held().await;

    tree.delete_subtree("x").await?;
    tree.insert(&node("x", Some("p2"))).await?;
    hold.release();
    let report = deleter.await.expect("the deleter task")?;

    assert_eq!(report.nodes, 1, "only p1 was left to delete");
    assert!(tree.get("p1").await?.is_none());
    let x = tree.get("x").await?.expect("the new x stays");
    assert_eq!(x.parent.as_deref(), Some("p2"));
    assert_eq!(adj_kids(&clean, "ar", "p2").await, (1, 1), "p2 counts x");
    assert_eq!(tree.delete_subtree("p2").await?.nodes, 2);
    Ok(())
}

/// An adjacency move of `x` whose transaction is held after it read `x` under `p1`;
/// meanwhile `x` is deleted and inserted again under `p2`. The held move must not count the
/// new `x` down in `p1` (its old parent as read): the move is planned again from `p2`.
#[tokio::test]
async fn an_adjacency_move_of_a_node_inserted_again_elsewhere_counts_its_real_parent()
-> Result<(), Error> {
    let clean = db::<DefaultTable>().await;
    let tree = Adj::tree(&clean, "ax");
    let node = |id: &str, parent: Option<&str>| Adj {
        owner: "ax".into(),
        id: id.into(),
        parent: parent.map(Into::into),
        body: id.into(),
    };
    for (id, parent) in [("p1", None), ("p2", None), ("q", None), ("x", Some("p1"))] {
        tree.insert(&node(id, parent)).await?;
    }
    let hold = Hold::on(&["TransactWriteItems"], "N#x", &[]);
    let slow = holding_db(&clean, &hold);
    let mover = tokio::spawn(async move { Adj::tree(&slow, "ax").move_subtree("x", "q").await });
    hold.held().await;

    tree.delete_subtree("x").await?;
    tree.insert(&node("x", Some("p2"))).await?;
    hold.release();
    mover.await.expect("the mover task")?;

    let x = tree.get("x").await?.expect("x");
    assert_eq!(x.parent.as_deref(), Some("q"));
    for (id, kids) in [("p1", 0), ("p2", 0), ("q", 1)] {
        assert_eq!(adj_kids(&clean, "ax", id).await, (kids, kids as usize), "counter of {id}");
    }
    assert_eq!(tree.delete_subtree("q").await?.nodes, 2);
    Ok(())
}

/// An adjacency move of `x` under `a` whose walk up from `a` is held at the read of `a`'s
/// parent `b` while `a` moves to the top and `b` under `a`: the walk then meets `a` twice.
/// The move reads the ancestors again (it was sent as a transaction naming `a` twice,
/// refused as `InvalidTransaction`).
#[tokio::test]
async fn an_adjacency_move_whose_ancestor_reads_straddle_a_move_reads_them_again()
-> Result<(), Error> {
    let clean = db::<DefaultTable>().await;
    let tree = Adj::tree(&clean, "aw");
    let node = |id: &str, parent: Option<&str>| Adj {
        owner: "aw".into(),
        id: id.into(),
        parent: parent.map(Into::into),
        body: id.into(),
    };
    for (id, parent) in [("b", None), ("a", Some("b")), ("x", None)] {
        tree.insert(&node(id, parent)).await?;
    }
    let hold = Hold::on(&["GetItem"], "N#b", &[]);
    let slow = holding_db(&clean, &hold);
    let mover = tokio::spawn(async move { Adj::tree(&slow, "aw").move_subtree("x", "a").await });
    hold.held().await;

    tree.move_to_top("a").await?;
    tree.move_subtree("b", "a").await?;
    hold.release();
    mover.await.expect("the mover task")?;

    let crumbs: Vec<String> = tree.breadcrumbs("x").await?.into_iter().map(|n| n.id).collect();
    assert_eq!(crumbs, ["a", "x"]);
    for (id, kids) in [("a", 2), ("b", 0), ("x", 0)] {
        assert_eq!(adj_kids(&clean, "aw", id).await, (kids, kids as usize), "counter of {id}");
    }
    Ok(())
}

/// A transactional closure move of `x` reads its subtree, then its transaction is held; a
/// large move of `y` under `x1` (a node of that subtree) runs from start to end meanwhile.
/// The held transaction must not land as read: it would move `x` and `x1` but leave `y` with
/// its copies under `x`'s old ancestors and its own copy recording them (subtree sizes off by
/// one, later moves finding "parents that do not lead to" the root). The large move counts
/// itself in the new parent's revision, so the held move fails its condition and is retried.
#[tokio::test]
async fn a_closure_move_racing_a_large_move_into_its_subtree_moves_the_newcomer_too()
-> Result<(), Error> {
    let clean = db::<DefaultTable>().await;
    let tree = Boxed::tree(&clean, "cl");
    let node = |id: &str, parent: Option<&str>| Boxed {
        owner: "cl".into(),
        id: id.into(),
        parent: parent.map(Into::into),
        body: id.into(),
    };
    let nodes = [("r", None), ("t", None), ("y", None), ("x", Some("r")), ("x1", Some("x"))];
    for (id, parent) in nodes {
        tree.insert(&node(id, parent)).await?;
    }
    let hold = Hold::on(&["TransactWriteItems"], "", &[]);
    let slow = holding_db(&clean, &hold);
    let mover = tokio::spawn(async move { Boxed::tree(&slow, "cl").move_subtree("x", "t").await });
    hold.held().await;
    let report = tree.move_subtree("y", "x1").transaction_limit(0).await?;
    assert!(report.resumable);
    hold.release();
    let report = mover.await.expect("the mover task")?;
    assert_eq!(report.nodes, 3, "the move took the newcomer along");
    let ids = |nodes: Vec<Boxed>| nodes.into_iter().map(|n| n.id).collect::<Vec<_>>();
    assert_eq!(ids(tree.ancestors("y").await?), ["t", "x", "x1"]);
    assert_eq!(tree.subtree_size("r").await?, 1);
    assert_eq!(tree.subtree_size("t").await?, 4);
    assert_eq!(tree.subtree_size("x").await?, 3);
    assert_eq!(ids(tree.at_depth(4).all().await?), ["y"]);
    assert_eq!(tree.nodes().all().await?.len(), 5);
    Ok(())
}

/// A large move of `c` from `a` to `r` is interrupted after its copy phase: `c` has copies
/// under `r` at two depths. A transactional move of `r` lists `c` twice; it must answer
/// `Busy` (the operation is pending), not send a transaction that names `c`'s items twice
/// (`InvalidTransaction`, DuplicateItem). Resumed, the move of `r` goes through.
#[tokio::test]
async fn a_closure_move_of_a_subtree_listing_a_node_twice_is_busy() -> Result<(), Error> {
    use ddb_model::testing::{Faults, Harness};
    let clean = db::<DefaultTable>().await;
    let tree = Boxed::tree(&clean, "dup");
    let node = |id: &str, parent: Option<&str>| Boxed {
        owner: "dup".into(),
        id: id.into(),
        parent: parent.map(Into::into),
        body: id.into(),
    };
    for (id, parent) in [("r", None), ("t", None), ("a", Some("r")), ("c", Some("a"))] {
        tree.insert(&node(id, parent)).await?;
    }
    // The intent (1), the checks (4), the phase (1), the copies (1), the phase (1).
    let cut_off = Harness::on(clean.clone(), Faults::default().fail_from(8)).await?;
    let faulty = cut_off.db().clone();
    Boxed::tree(&faulty, "dup").move_subtree("c", "r").transaction_limit(0).await.unwrap_err();
    assert!(tree.pending().await?.is_some());
    assert_eq!(tree.descendants("r").count().await?, 3, "c is listed twice under r");
    let err = tree.move_subtree("r", "t").await.unwrap_err();
    assert!(matches!(err, Error::Tree { problem: TreeProblem::Busy { .. }, .. }), "{err:?}");
    tree.resume(|_| {}).await?.expect("resumed");
    tree.move_subtree("r", "t").await?;
    let ids = |nodes: Vec<Boxed>| nodes.into_iter().map(|n| n.id).collect::<Vec<_>>();
    assert_eq!(ids(tree.ancestors("c").await?), ["t", "r"]);
    assert_eq!(tree.subtree_size("t").await?, 4);
    Ok(())
}

/// A transactional move of `x` under `p` reads the two own copies, then lists `x`'s subtree.
/// If `p` moves under `x` in between (the reads are not one snapshot), the listing holds `p`:
/// the move must read again and find the cycle, not send a transaction that both rewrites
/// `p`'s own copy and counts the move in it (one item twice: `InvalidTransaction`).
#[tokio::test]
async fn a_closure_move_whose_new_parent_moves_below_it_meanwhile_is_a_cycle() -> Result<(), Error>
{
    let clean = db::<DefaultTable>().await;
    let tree = Boxed::tree(&clean, "race");
    let node = |id: &str, parent: Option<&str>| Boxed {
        owner: "race".into(),
        id: id.into(),
        parent: parent.map(Into::into),
        body: id.into(),
    };
    for (id, parent) in [("x", None), ("p", None), ("k", Some("x"))] {
        tree.insert(&node(id, parent)).await?;
    }
    // The subtree listing of `x` (a Query on the copies under it) is held.
    let hold = Hold::on(&["Query"], "~c#x#", &[]);
    let slow = holding_db(&clean, &hold);
    let mut mover =
        tokio::spawn(async move { Boxed::tree(&slow, "race").move_subtree("x", "p").await });
    let outcome = tokio::select! {
        r = &mut mover => r.expect("the move task"),
        () = hold.held() => {
            tree.move_subtree("p", "k").await?;
            hold.release();
            mover.await.expect("the move task")
        }
    };
    let err = outcome.expect_err("p is below x now");
    assert!(err.is_tree_cycle(), "{err:?}");
    let ids = |nodes: Vec<Boxed>| nodes.into_iter().map(|n| n.id).collect::<Vec<_>>();
    assert_eq!(ids(tree.ancestors("p").await?), ["x", "k"]);
    assert_eq!(tree.subtree_size("x").await?, 3);
    Ok(())
}

/// A large delete of `x` (with `a` under it and `m` under `a`) stops after its `k`-th request,
/// for every `k`. If `m` is gone by then, its id is free: an insert of a new `m` at the top
/// level succeeds (the delete's intent guards `x`, not the ids below it). Resuming the delete
/// must not touch that new node: it is whole (entity item, own copy, one copy under the
/// tree) and the tree holds nothing of `x`'s subtree.
#[tokio::test]
async fn a_resumed_closure_delete_leaves_a_node_inserted_again_with_a_freed_id_alone()
-> Result<(), Error> {
    use ddb_model::testing::{Faults, Harness};
    let clean = db::<DefaultTable>().await;
    let mut reinserted = 0;
    for k in 1..=16 {
        let owner = format!("free{k}");
        let tree = Boxed::tree(&clean, &owner);
        let node = |id: &str, parent: Option<&str>| Boxed {
            owner: owner.clone(),
            id: id.into(),
            parent: parent.map(Into::into),
            body: format!("old {id}"),
        };
        for (id, parent) in [("x", None), ("a", Some("x")), ("m", Some("a")), ("b", Some("x"))] {
            tree.insert(&node(id, parent)).await?;
        }
        let cut_off = Harness::on(clean.clone(), Faults::default().fail_from(k)).await?;
        let dying = cut_off.db().clone();
        let done = Boxed::tree(&dying, &owner).delete_subtree("x").transaction_limit(0).await;
        let again = Boxed { body: "new m".into(), ..node("m", None) };
        let inserted = tree.insert(&again).await.is_ok();
        tree.resume(|_| {}).await?;
        assert!(tree.pending().await?.is_none(), "k = {k}");
        if tree.get("x").consistent().await?.is_some() {
            // Stopped before it began: the delete is sent again.
            tree.delete_subtree("x").transaction_limit(0).await?;
        }
        let ids: Vec<String> =
            tree.nodes().consistent().all().await?.into_iter().map(|n| n.id).collect();
        if inserted {
            reinserted += 1;
            assert_eq!(ids, ["m"], "k = {k} ({done:?})");
            assert_eq!(tree.get("m").consistent().await?, Some(again), "k = {k}");
            assert_eq!(tree.subtree_size("m").await?, 1, "k = {k}");
            assert!(tree.ancestors("m").await?.is_empty(), "k = {k}");
        } else {
            assert!(ids.is_empty(), "k = {k}: {ids:?}");
        }
        let left = crate::support::snapshot(&clean).await;
        let mine: Vec<&String> = left
            .iter()
            .filter(|i| i.contains(&format!("BOX#{owner}\"")))
            .filter(|i| !i.contains("body=S(\"new m\")"))
            .collect();
        assert!(mine.is_empty(), "k = {k}: items of the deleted subtree are left: {mine:#?}");
    }
    assert!(reinserted >= 2, "some crash point frees `m` before the delete ends: {reinserted}");
    Ok(())
}

/// A delete of the adjacency subtree of `x` reads it level by level. Between its reads of
/// `a`'s and `b`'s children, `c` moves from `a` to `b` and `z` from `b` to `a`: the counts
/// still add up, but `c` is met twice. The delete must read again (and delete `z` too), not
/// send a transaction naming `c` twice (`InvalidTransaction`, DuplicateItem).
#[tokio::test]
async fn an_adjacency_delete_whose_level_reads_meet_a_node_twice_reads_again() -> Result<(), Error>
{
    let clean = db::<DefaultTable>().await;
    let tree = Adj::tree(&clean, "twice");
    let node = |id: &str, parent: Option<&str>| Adj {
        owner: "twice".into(),
        id: id.into(),
        parent: parent.map(Into::into),
        body: id.into(),
    };
    for (id, parent) in [("x", None), ("a", Some("x")), ("b", Some("x")), ("c", Some("a"))] {
        tree.insert(&node(id, parent)).await?;
    }
    tree.insert(&node("z", Some("b"))).await?;
    // The query of `b`'s children is held until the two moves are done.
    let hold = Hold::on(&["Query"], "N#b#", &[]);
    let slow = holding_db(&clean, &hold);
    let mut deleter =
        tokio::spawn(async move { Adj::tree(&slow, "twice").delete_subtree("x").await });
    let outcome = tokio::select! {
        r = &mut deleter => r.expect("the delete task"),
        () = hold.held() => {
            tree.move_subtree("c", "b").await?;
            tree.move_subtree("z", "a").await?;
            hold.release();
            deleter.await.expect("the delete task")
        }
    };
    assert!(hold.was_taken(), "the children of b were read");
    assert_eq!(outcome?.nodes, 5);
    for id in ["x", "a", "b", "c", "z"] {
        assert!(tree.get(id).consistent().await?.is_none(), "{id} is deleted");
    }
    Ok(())
}

/// A large move of `c` from under `a` to `t` is interrupted in its remove phase: `c`'s own
/// copy records `t`, its old copy under `a` is still there. A transactional delete of `a`
/// lists `c`; if it went on (its transaction held until `resume` finished the move and
/// removed the intent), it would delete `c` where it lives now, under `t`. It must see that
/// `c` is not below `a` (`Busy` while the move is pending) and leave `c` alone.
#[tokio::test]
async fn a_closure_delete_does_not_take_a_node_a_large_move_took_elsewhere() -> Result<(), Error> {
    use ddb_model::testing::{Faults, Harness};
    use ddb_model::tree::OpPhase;
    let clean = db::<DefaultTable>().await;
    let tree = Boxed::tree(&clean, "away");
    let node = |id: &str, parent: Option<&str>| Boxed {
        owner: "away".into(),
        id: id.into(),
        parent: parent.map(Into::into),
        body: id.into(),
    };
    for (id, parent) in [("r", None), ("t", None), ("a", Some("r")), ("c", Some("a"))] {
        tree.insert(&node(id, parent)).await?;
    }
    // The intent, the checks (4), the phase, the copies, the phase, the switch, the phase:
    // the first chunk of removals fails.
    let cut_off = Harness::on(clean.clone(), Faults::default().fail_from(10)).await?;
    let faulty = cut_off.db().clone();
    Boxed::tree(&faulty, "away").move_subtree("c", "t").transaction_limit(0).await.unwrap_err();
    assert_eq!(tree.pending().await?.expect("an interrupted move").phase, OpPhase::Remove);
    let hold = Hold::on(&["TransactWriteItems"], "", &[]);
    let slow = holding_db(&clean, &hold);
    let mut deleter =
        tokio::spawn(async move { Boxed::tree(&slow, "away").delete_subtree("a").await });
    let outcome = tokio::select! {
        r = &mut deleter => r.expect("the delete task"),
        () = hold.held() => {
            tree.resume(|_| {}).await?.expect("resumed");
            hold.release();
            deleter.await.expect("the delete task")
        }
    };
    let err = outcome.expect_err("the delete waits for the move");
    assert!(matches!(err, Error::Tree { problem: TreeProblem::Busy { .. }, .. }), "{err:?}");
    tree.resume(|_| {}).await?;
    let ids = |nodes: Vec<Boxed>| nodes.into_iter().map(|n| n.id).collect::<Vec<_>>();
    assert_eq!(ids(tree.ancestors("c").await?), ["t"]);
    assert_eq!(tree.subtree_size("t").await?, 2);
    assert_eq!(tree.subtree_size("r").await?, 2);
    Ok(())
}
