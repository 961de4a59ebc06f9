use ddb_model::{Entity, Table};
use serde::{Deserialize, Serialize};

#[derive(Table)]
#[table(name = "saas", tenant = "ORG#", gsi(name = "gsi1", pk = "gsi1pk", sk = "gsi1sk"))]
struct Saas;

#[derive(Entity, Serialize, Deserialize)]
#[entity(table = Saas, pk = "ORG#<org>", sk = "USER#<id>", tenant = org)]
#[index(gsi1, pk = "TEAM#<org>", sk = "<id>")]
struct User {
    org: String,
    id: String,
}

fn main() {}
