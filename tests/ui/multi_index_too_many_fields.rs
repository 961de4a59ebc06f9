use ddb_model::{Entity, Table};
use serde::{Deserialize, Serialize};

#[derive(Table)]
#[table(name = "shop", gsi(name = "gsi1", pk = "gsi1pk", sk = "gsi1sk"),
        gsi(name = "by_status", pk = ["tenant", "status"], sk = ["priority": N, "created"]))]
struct Shop;
#[derive(Entity, Serialize, Deserialize)]
#[entity(table = Shop, pk = "ORDER#<id>", sk = "ORDER")]
#[index(by_status, pk = [tenant, status], sk = [a, b, c, d, e])]
struct Order {
    id: String,
    tenant: String,
    status: String,
    a: i64,
    b: i64,
    c: i64,
    d: i64,
    e: i64,
}
fn main() {}
