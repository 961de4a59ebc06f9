use ddb_model::Entity;
use serde::{Deserialize, Serialize};

#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "DOC#<id>", sk = "DOC", updated_at = updated)]
struct Doc {
    id: String,
    updated: String,
}

fn main() {}
