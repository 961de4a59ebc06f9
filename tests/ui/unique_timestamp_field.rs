use ddb_model::Entity;
use serde::{Deserialize, Serialize};

#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "USER#<id>", sk = "PROFILE", created_at = created)]
struct User {
    id: String,
    #[unique]
    created: u64,
}

fn main() {}
