use ddb_model::Entity;
use serde::{Deserialize, Serialize};

#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "PRODUCT#<price>", sk = "META")]
struct Product {
    price: f64,
    name: String,
}

fn main() {}
