//! Recovery fences the old writer (issue 13, item 10): a request of a large operation's
//! writer is held at the HTTP layer (as a paused process's, or a killed container's
//! in-flight request), recovery (`resume` or `rollback`) runs from another `Db`, users write,
//! then the held request is released. It must not land, and the woken-up writer stops with
//! `TreeProblem::Superseded`.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use aws_smithy_runtime_api::client::http::{
    HttpClient, HttpConnector, HttpConnectorFuture, HttpConnectorSettings, SharedHttpClient,
    SharedHttpConnector,
};
use aws_smithy_runtime_api::client::orchestrator::HttpRequest;
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
    marker: String,
    also: Vec<String>,
    taken: AtomicBool,
    held: Notify,
    release: Semaphore,
}

impl Hold {
    pub fn new(marker: &str, also: &[&str]) -> Arc<Hold> {
        Arc::new(Hold {
            marker: marker.to_owned(),
            also: also.iter().map(|s| (*s).to_owned()).collect(),
            taken: AtomicBool::new(false),
            held: Notify::new(),
            release: Semaphore::new(0),
        })
    }

    /// Waits until the request is held.
    pub async fn held(&self) {
        self.held.notified().await;
    }

    /// Lets the held request go on to the service.
    pub fn release(&self) {
        self.release.add_permits(1);
    }

    fn matches(&self, request: &HttpRequest) -> bool {
        let target = request.headers().get("x-amz-target").unwrap_or("");
        if !(target.ends_with("BatchWriteItem") || target.ends_with("TransactWriteItems")) {
            return false;
        }
        let body = request.body().bytes().map(String::from_utf8_lossy).unwrap_or_default();
        body.contains(&self.marker) && self.also.iter().all(|a| body.contains(a.as_str()))
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
                hold.held.notify_one();
                let _permit = hold.release.acquire().await;
            }
            inner.call(request).await
        })
    }
}

/// A `Db` on `clean`'s table whose matching request `hold` holds. Long timeouts: the held
/// request must not be retried by the SDK.
pub fn holding_db<T: ddb_model::Table>(clean: &Db<T>, hold: &Arc<Hold>) -> Db<T> {
    let endpoint = local::endpoint().expect("endpoint");
    let inner = aws_smithy_http_client::Builder::new().build_http();
    let config = Config::builder()
        .behavior_version(BehaviorVersion::latest())
        .region(Region::new("us-east-1"))
        .credentials_provider(Credentials::new("local", "local", None, None, "test"))
        .endpoint_url(endpoint)
        .http_client(Holding { inner, hold: Arc::clone(hold) })
        .retry_config(RetryConfig::standard().with_max_attempts(1))
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
    assert!(superseded(&err), "the woken-up mover stops: {err}");
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
    assert!(superseded(&err), "the woken-up mover stops: {err}");
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
    assert!(superseded(&err), "the woken-up deleter stops: {err}");
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
    assert!(superseded(&err), "the woken-up mover stops: {err}");
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
    assert!(superseded(&err), "the woken-up mover stops: {err}");
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
    assert!(superseded(&err), "the woken-up deleter stops: {err}");
    Ok(())
}
