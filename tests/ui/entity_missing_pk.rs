use ddb_model::Entity;
use serde::{Deserialize, Serialize};

#[derive(Entity, Serialize, Deserialize)]
#[entity(sk = "PROFILE")]
struct User {
    id: String,
}

fn main() {}
