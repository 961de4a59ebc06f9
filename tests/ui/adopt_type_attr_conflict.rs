use ddb_model::{Entity, Table};
use serde::{Deserialize, Serialize};

#[derive(Table)]
#[table(name = "app", type_attr = "kind", no_type_attr)]
struct App;

#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "USER#<id>", sk = "PROFILE", type_attr = "kind", no_type_attr)]
struct User {
    id: String,
}

#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "ORDER#<id>", sk = "ORDER", type_attr = "", no_type_attr = "yes")]
struct Order {
    id: String,
}

fn main() {}
