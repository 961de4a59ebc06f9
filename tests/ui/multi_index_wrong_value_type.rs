use ddb_model::{Entity, Table};
use serde::{Deserialize, Serialize};

#[derive(Table)]
#[table(name = "shop", gsi(name = "gsi1", pk = "gsi1pk", sk = "gsi1sk"),
        gsi(name = "by_status", pk = ["tenant", "status"], sk = ["priority": N, "created"]))]
struct Shop;
#[derive(Entity, Serialize, Deserialize)]
#[entity(table = Shop, pk = "ORDER#<id>", sk = "ORDER")]
#[index(by_status, pk = [tenant, status], sk = [priority, created])]
struct Order {
    id: String,
    tenant: String,
    status: String,
    priority: i64,
    created: String,
}

fn query(db: &ddb_model::Db<Shop>) {
    let _ = Order::query_by_status(db, "acme", "open").priority("high");
}

fn main() {}
