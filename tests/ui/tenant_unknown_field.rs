use ddb_model::{Entity, Table};
use serde::{Deserialize, Serialize};

#[derive(Table)]
#[table(name = "saas", tenant = "ORG#")]
struct Saas;

#[derive(Entity, Serialize, Deserialize)]
#[entity(table = Saas, pk = "ORG#<org>", sk = "USER#<id>", tenant = organization)]
struct User {
    org: String,
    id: String,
}

fn main() {}
