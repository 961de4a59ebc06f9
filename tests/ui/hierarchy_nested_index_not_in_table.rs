use ddb_model::{Entity, Table};
use serde::{Deserialize, Serialize};

#[derive(Table)]
#[table(name = "app", gsi(name = "by_email", pk = "gsi2pk"))]
struct App;

// The nested-set strategy orders intervals on an index the table has ...
#[derive(Entity, Serialize, Deserialize)]
#[entity(table = App, pk = "SHOP#<shop>", sk = "CAT#<id>")]
#[hierarchy(strategy = nested_set, parent = parent, index = intervals)]
struct MissingIndex {
    shop: String,
    id: String,
    parent: Option<String>,
}

// ... with a sort key.
#[derive(Entity, Serialize, Deserialize)]
#[entity(table = App, pk = "SHOP#<shop>", sk = "CAT#<id>")]
#[hierarchy(strategy = nested_set, parent = parent, index = by_email)]
struct IndexWithoutSortKey {
    shop: String,
    id: String,
    parent: Option<String>,
}

// The parent field names another type than the id.
#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "SHOP#<shop>", sk = "CAT#<id>")]
#[hierarchy(strategy = nested_set, parent = parent, index = gsi1)]
struct ParentOfOtherType {
    shop: String,
    id: String,
    parent: Option<u32>,
}

fn main() {}
