use ddb_model::Entity;
use serde::{Deserialize, Serialize};

#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "DOC#<id>", sk = "V#<version>", version = version)]
struct User {
    id: String,
    version: u64,
}

fn main() {}
