use ddb_model::Entity;
use serde::{Deserialize, Serialize};

#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "DOC#<id>", version = "version", sk = "DOC")]
struct Doc {
    id: String,
    version: u64,
}

fn main() {}
