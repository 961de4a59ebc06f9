use std::collections::HashMap;

use ddb_model::Entity;
use serde::{Deserialize, Serialize};

#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "USER#<id>", sk = "PROFILE", strict)]
struct User {
    id: String,
    #[serde(flatten)]
    extra: HashMap<String, String>,
}

#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "ORDER#<id>", sk = "ORDER", strict = true)]
#[entity(strict, strict)]
struct Order {
    id: String,
}

fn main() {}
