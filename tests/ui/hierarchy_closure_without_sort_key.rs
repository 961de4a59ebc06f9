use ddb_model::{Entity, Table};
use serde::{Deserialize, Serialize};

#[derive(Table)]
#[table(name = "app", no_sort_key)]
struct Flat;

// The node's id goes in the sort key, which this entity does not have.
#[derive(Entity, Serialize, Deserialize)]
#[entity(table = Flat, pk = "EMP#<id>")]
#[hierarchy(strategy = closure, parent = manager)]
struct Employee {
    id: String,
    manager: Option<String>,
}

fn main() {}
