use ddb_model::prelude::*;
use serde::{Deserialize, Serialize};

fn upper(s: &String) -> String {
    s.to_uppercase()
}

#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "ORDER#<id>", sk = "X")]
#[index(gsi1, pk = "BRAND#<key>", computed(key: String = upper(brand)))]
#[index(gsi2, pk = "B#<key>", sk = "<id>", computed(key: String = upper(brand)))]
struct Order {
    id: String,
    brand: String,
}

fn main() {}
