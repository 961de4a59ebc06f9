use ddb_model::Entity;
use serde::{Deserialize, Serialize};

// The old layout swaps the placeholders: `ORG#a#b` could be either layout's key.
#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "ORG#<org>#<id>", sk = "MEMBER", rekey(pk = "ORG#<id>#<org>", sk = "MEMBER"))]
struct Member {
    org: String,
    id: String,
}

fn main() {}
