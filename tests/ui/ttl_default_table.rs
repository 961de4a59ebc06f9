use ddb_model::Entity;
use serde::{Deserialize, Serialize};

#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "SESSION#<id>", sk = "SESSION", ttl = expires)]
struct Session {
    id: String,
    expires: u64,
}

fn main() {}
