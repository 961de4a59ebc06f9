//! Tree bookkeeping never reaches a node's struct: every strategy keeps attributes of its own
//! on node items (a revision, a child count), and the entity layer strips them on read
//! through `Entity::BOOKKEEPING_ATTRS`, which `#[hierarchy]` fills. The nodes here deny
//! unknown fields, so an attribute left in the item would fail the read.

use ddb_model::prelude::*;
use ddb_model::{Item, TreePath};
use serde::{Deserialize, Serialize};

use crate::support::{db, raw};

#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
#[entity(pk = "STRICT#<drive>", sk = "NODE#<path>")]
#[hierarchy(path = path, index = gsi1)]
struct StrictFolder {
    drive: String,
    path: TreePath,
}

#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
#[entity(pk = "STRICT#<owner>", sk = "DIR#<id>")]
#[hierarchy(strategy = closure, parent = parent)]
struct StrictDir {
    owner: String,
    id: String,
    parent: Option<String>,
}

#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
#[entity(pk = "STRICT#<catalog>", sk = "CAT#<id>")]
#[hierarchy(strategy = adjacency, parent = parent, index = gsi2)]
struct StrictCat {
    catalog: String,
    id: String,
    parent: Option<String>,
}

fn tree_attrs(item: &Item) -> Vec<&str> {
    let mut names: Vec<&str> =
        item.keys().map(String::as_str).filter(|k| k.starts_with("_tree_")).collect();
    names.sort_unstable();
    names
}

#[tokio::test]
async fn path_nodes_read_without_their_revision() -> Result<(), Error> {
    let db: Db = db().await;
    let tree = StrictFolder::tree(&db, "d");
    let root = StrictFolder { drive: "d".into(), path: "a".parse()? };
    tree.insert(&root).await?;
    tree.insert(&StrictFolder { drive: "d".into(), path: "a/b".parse()? }).await?;

    let stored = raw(&db, "STRICT#d", "NODE#a").await.expect("the root");
    assert_eq!(tree_attrs(&stored), ["_tree_rev"], "{stored:?}");
    assert_eq!(StrictFolder::get(&db, "d", &root.path).await?, Some(root.clone()));
    assert_eq!(tree.get(&root.path).await?, Some(root));
    Ok(())
}

#[tokio::test]
async fn closure_nodes_read_without_their_bookkeeping() -> Result<(), Error> {
    let db: Db = db().await;
    let tree = StrictDir::tree(&db, "o");
    let root = StrictDir { owner: "o".into(), id: "root".into(), parent: None };
    let child = StrictDir { owner: "o".into(), id: "child".into(), parent: Some("root".into()) };
    tree.insert(&root).await?;
    tree.insert(&child).await?;

    assert_eq!(StrictDir::get(&db, "o", "root").await?, Some(root.clone()));
    assert_eq!(StrictDir::get(&db, "o", "child").await?, Some(child.clone()));
    assert_eq!(tree.get("child").await?, Some(child.clone()));
    assert_eq!(tree.children("root").all().await?, [child]);
    Ok(())
}

#[tokio::test]
async fn adjacency_nodes_read_without_their_revision_and_child_count() -> Result<(), Error> {
    let db: Db = db().await;
    let tree = StrictCat::tree(&db, "c");
    let root = StrictCat { catalog: "c".into(), id: "root".into(), parent: None };
    let child = StrictCat { catalog: "c".into(), id: "kid".into(), parent: Some("root".into()) };
    tree.insert(&root).await?;
    tree.insert(&child).await?;

    let stored = raw(&db, "STRICT#c", "CAT#root").await.expect("the root");
    assert_eq!(tree_attrs(&stored), ["_tree_kids", "_tree_rev"], "{stored:?}");
    assert_eq!(StrictCat::get(&db, "c", "root").await?, Some(root.clone()));
    assert_eq!(tree.get("root").await?, Some(root));
    assert_eq!(tree.children("root").all().await?, [child]);
    Ok(())
}
