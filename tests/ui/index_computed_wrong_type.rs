use ddb_model::prelude::*;
use serde::{Deserialize, Serialize};

fn upper(s: &String) -> String {
    s.to_uppercase()
}

#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "ORDER#<id>", sk = "X")]
#[index(gsi1, pk = "BRAND#<key>", sk = "ORDER#<id>", computed(key: u32 = upper(brand)))]
struct Order {
    id: String,
    brand: String,
}

fn main() {}
