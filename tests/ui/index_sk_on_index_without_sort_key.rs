use ddb_model::{Entity, Table};
use serde::{Deserialize, Serialize};

#[derive(Table)]
#[table(name = "app", gsi(name = "gsi1", pk = "gsi1pk"))]
struct App;

#[derive(Entity, Serialize, Deserialize)]
#[entity(table = App, pk = "USER#<id>", sk = "PROFILE")]
#[index(gsi1, pk = "ORG#<org>", sk = "USER#<id>")]
struct User {
    id: String,
    org: String,
}

fn main() {}
