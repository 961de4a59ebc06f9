use ddb_model::{Entity, Table};
use serde::{Deserialize, Serialize};

#[derive(Table)]
#[table(
    name = "shop",
    gsi(name = "by_status", pk = ["tenant", "status"]),
    vector(name = "by_look", attr = "look", dims = 3, metric = cosine)
)]
struct Shop;

// An attribute an index is keyed by, or holds the vectors of, is read by the service.
#[derive(Entity, Serialize, Deserialize)]
#[entity(table = Shop, pk = "ITEM#<id>", sk = "ITEM")]
#[index(by_status, pk = [tenant, status])]
struct Product {
    id: String,
    tenant: String,
    #[encrypt]
    status: String,
    #[vector(by_look)]
    #[encrypt]
    look: Vec<f32>,
}

fn main() {}
