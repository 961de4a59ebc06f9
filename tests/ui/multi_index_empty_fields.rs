use ddb_model::{Entity, Table};
use serde::{Deserialize, Serialize};

#[derive(Table)]
#[table(name = "shop", gsi(name = "gsi1", pk = "gsi1pk", sk = "gsi1sk"),
        gsi(name = "by_status", pk = ["tenant", "status"], sk = ["priority": N, "created"]))]
struct Shop;
#[derive(Entity, Serialize, Deserialize)]
#[entity(table = Shop, pk = "ORDER#<id>", sk = "ORDER")]
#[index(by_status, pk = [], sk = [priority, created])]
struct Order {
    id: String,
    priority: i64,
    created: String,
}
fn main() {}
