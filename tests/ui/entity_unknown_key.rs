use ddb_model::Entity;
use serde::{Deserialize, Serialize};

#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "USER#<id>", sk = "PROFILE", expire_after = expires)]
struct User {
    id: String,
    expires: u64,
}

fn main() {}
