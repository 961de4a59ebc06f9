use ddb_model::Entity;
use serde::{Deserialize, Serialize};

// The old layout leaves out a key field.
#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "ORG#<org>", sk = "MEMBER#<id>", rekey(pk = "MEMBER#<id>", sk = "MEMBER"))]
struct Member {
    org: String,
    id: String,
}

fn main() {}
