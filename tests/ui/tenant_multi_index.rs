use ddb_model::{Entity, Table};
use serde::{Deserialize, Serialize};

#[derive(Table)]
#[table(name = "saas", tenant = "ORG#", gsi(name = "by_status", pk = ["org", "status"]))]
struct Saas;

#[derive(Entity, Serialize, Deserialize)]
#[entity(table = Saas, pk = "ORG#<org>", sk = "TASK#<id>", tenant = org)]
#[index(by_status, pk = [org, status])]
struct Task {
    org: String,
    id: String,
    status: String,
}

fn main() {}
