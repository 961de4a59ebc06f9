use ddb_model::Entity;
use serde::{Deserialize, Serialize};

#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "DOC#<id>", created_at = at, updated_at = at)]
struct Doc {
    id: String,
    at: u64,
}

fn main() {}
