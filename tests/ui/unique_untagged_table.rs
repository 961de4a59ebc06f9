use ddb_model::{Entity, Table};
use serde::{Deserialize, Serialize};

#[derive(Table)]
#[table(name = "app", no_type_attr)]
struct App;

#[derive(Entity, Serialize, Deserialize)]
#[entity(table = App, pk = "USER#<id>", sk = "PROFILE")]
struct User {
    id: String,
    #[unique]
    email: String,
}

fn main() {}
