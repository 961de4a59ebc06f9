use ddb_model::{Entity, Table};
use serde::{Deserialize, Serialize};

#[derive(Table)]
#[table(name = "saas", tenant = "ORG#")]
struct Saas;

#[derive(Entity, Serialize, Deserialize)]
#[entity(table = Saas, pk = "USER#<id>#ORG#<org>", sk = "USER", tenant = org)]
struct User {
    org: String,
    id: String,
}

fn main() {}
