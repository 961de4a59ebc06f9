use ddb_model::{Entity, Table};
use serde::{Deserialize, Serialize};

#[derive(Table)]
#[table(name = "app", gsi(name = "gsi1", pk = "gsi1pk", sk = "gsi1sk"))]
struct App;

#[derive(Entity, Serialize, Deserialize)]
#[entity(table = App, pk = "ORG#<org>", sk = "EMP#<id>")]
#[hierarchy(strategy = closure, parent = boss)]
struct Employee {
    org: String,
    id: String,
    boss: Option<String>,
    #[sign_only]
    salary: u64,
}

fn main() {}
