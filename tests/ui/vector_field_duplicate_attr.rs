use ddb_model::{Entity, Table};
use serde::{Deserialize, Serialize};

#[derive(Table)]
#[table(name = "shop", vector(name = "by_look", attr = "look", dims = 3, metric = cosine))]
struct Shop;

#[derive(Entity, Serialize, Deserialize)]
#[entity(table = Shop, pk = "ITEM#<id>", sk = "ITEM")]
struct Product {
    id: String,
    #[vector(by_look)]
    #[vector(by_look)]
    look: Vec<f32>,
}

fn main() {}
