use ddb_model::{Entity, Table};
use serde::{Deserialize, Serialize};

#[derive(Table)]
#[table(name = "app", pk = "pk", sk = "sk")]
struct App;

#[derive(Entity, Serialize, Deserialize)]
#[entity(table = App, pk = "USER#<id>")]
struct User {
    id: String,
}

fn main() {}
