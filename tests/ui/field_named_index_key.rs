use ddb_model::{Entity, Table};
use serde::{Deserialize, Serialize};

#[derive(Table)]
#[table(name = "app", gsi(name = "gsi1", pk = "gsi1pk", sk = "gsi1sk"))]
struct App;

#[derive(Entity, Serialize, Deserialize)]
#[entity(table = App, pk = "USER#<id>", sk = "PROFILE")]
struct User {
    id: String,
    gsi1pk: String,
}

fn main() {}
