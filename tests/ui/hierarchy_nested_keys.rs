use ddb_model::Entity;
use serde::{Deserialize, Serialize};

// No index: the subtree range queries need one.
#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "SHOP#<shop>", sk = "CAT#<id>")]
#[hierarchy(strategy = nested_set, parent = parent)]
struct NoIndex {
    shop: String,
    id: String,
    parent: Option<String>,
}

// No parent field.
#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "SHOP#<shop>", sk = "CAT#<id>")]
#[hierarchy(strategy = nested_set, index = gsi1)]
struct NoParent {
    shop: String,
    id: String,
}

// A path: nested-set nodes are addressed by id.
#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "SHOP#<shop>", sk = "CAT#<id>")]
#[hierarchy(strategy = nested_set, parent = parent, path = id, index = gsi1)]
struct WithPath {
    shop: String,
    id: String,
    parent: Option<String>,
}

// A field stored where the node keeps its interval.
#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "SHOP#<shop>", sk = "CAT#<id>")]
#[hierarchy(strategy = nested_set, parent = parent, index = gsi1)]
struct ReservedAttr {
    shop: String,
    id: String,
    parent: Option<String>,
    #[serde(rename = "_tree_lft")]
    left: u64,
}

// Deeper than one BatchGetItem of the ancestors.
#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "SHOP#<shop>", sk = "CAT#<id>")]
#[hierarchy(strategy = nested_set, parent = parent, index = gsi1, max_depth = 100)]
struct TooDeep {
    shop: String,
    id: String,
    parent: Option<String>,
}

// The id is no sort key field.
#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "SHOP#<shop>", sk = "CAT#<id>#<rank>")]
#[hierarchy(strategy = nested_set, parent = parent, index = gsi1)]
struct TwoFieldSortKey {
    shop: String,
    id: String,
    rank: u32,
    parent: Option<String>,
}

fn main() {}
