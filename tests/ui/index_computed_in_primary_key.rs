use ddb_model::prelude::*;
use serde::{Deserialize, Serialize};

fn upper(s: &String) -> String {
    s.to_uppercase()
}

#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "BRAND#<key>", sk = "X")]
#[index(gsi1, pk = "B#<key>", computed(key: String = upper(brand)))]
struct Order {
    brand: String,
}

fn main() {}
