use ddb_model::{Entity, Table};
use serde::{Deserialize, Serialize};

#[derive(Table)]
#[table(name = "saas", tenant = "ORG#")]
struct Saas;

#[derive(Entity, Serialize, Deserialize)]
#[entity(table = Saas, pk = "ORG#<org:lower>", sk = "USER#<id>", tenant = org)]
struct User {
    org: String,
    id: String,
}

fn main() {}
