use ddb_model::Entity;
use serde::{Deserialize, Serialize};

#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "ORG#<org>", sk = "EMP#<id>")]
#[hierarchy(strategy = closure, parent = boss)]
struct Employee {
    org: String,
    id: String,
    boss: Option<String>,
    #[unique]
    email: String,
}

fn main() {}
