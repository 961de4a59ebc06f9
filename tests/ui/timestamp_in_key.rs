use ddb_model::Entity;
use serde::{Deserialize, Serialize};

#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "DOC#<id>", sk = "AT#<created>", created_at = created)]
struct Doc {
    id: String,
    created: u64,
}

fn main() {}
