use ddb_model::Entity;
use serde::{Deserialize, Serialize};

#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "DOC#<id>", version = rev, updated_at = rev)]
struct Doc {
    id: String,
    rev: u64,
}

fn main() {}
