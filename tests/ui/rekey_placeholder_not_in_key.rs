use ddb_model::Entity;
use serde::{Deserialize, Serialize};

// The old layout names a field that is not part of the key.
#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "ORG#<org>", sk = "MEMBER#<id>", rekey(pk = "MEMBER#<id>", sk = "NAME#<name>#<org>"))]
struct Member {
    org: String,
    id: String,
    name: String,
}

fn main() {}
