use ddb_model::Entity;
use serde::{Deserialize, Serialize};

#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "USER#<id>", sk = "PROFILE", version = version)]
struct User {
    id: String,
    #[unique]
    version: u64,
}

fn main() {}
