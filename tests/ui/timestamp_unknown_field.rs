use ddb_model::Entity;
use serde::{Deserialize, Serialize};

#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "DOC#<id>", created_at = creatd)]
struct Doc {
    id: String,
    created: u64,
}

fn main() {}
