use ddb_model::{Entity, Table};
use serde::{Deserialize, Serialize};

#[derive(Table)]
#[table(name = "app", gsi(name = "by_email", pk = "gsi2pk"))]
struct App;

// The adjacency strategy needs an index on the parent...
#[derive(Entity, Serialize, Deserialize)]
#[entity(table = App, pk = "SHOP#<shop>", sk = "CAT#<id>")]
#[hierarchy(strategy = adjacency, parent = parent)]
struct NoIndex {
    shop: String,
    id: String,
    parent: Option<String>,
}

// ... that the table has ...
#[derive(Entity, Serialize, Deserialize)]
#[entity(table = App, pk = "SHOP#<shop>", sk = "CAT#<id>")]
#[hierarchy(strategy = adjacency, parent = parent, index = children)]
struct MissingIndex {
    shop: String,
    id: String,
    parent: Option<String>,
}

// ... with a sort key.
#[derive(Entity, Serialize, Deserialize)]
#[entity(table = App, pk = "SHOP#<shop>", sk = "CAT#<id>")]
#[hierarchy(strategy = adjacency, parent = parent, index = by_email)]
struct IndexWithoutSortKey {
    shop: String,
    id: String,
    parent: Option<String>,
}

fn main() {}
