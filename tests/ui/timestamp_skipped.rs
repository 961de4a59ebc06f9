use ddb_model::Entity;
use serde::{Deserialize, Serialize};

#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "DOC#<id>", updated_at = updated)]
struct Doc {
    id: String,
    #[serde(skip)]
    updated: u64,
}

fn main() {}
