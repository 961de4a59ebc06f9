use ddb_model::Entity;
use serde::{Deserialize, Serialize};

#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "DOC#<id>", updated_at = updated, updated_at = changed)]
struct Doc {
    id: String,
    updated: u64,
    changed: u64,
}

fn main() {}
