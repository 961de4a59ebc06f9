use ddb_model::Entity;
use serde::{Deserialize, Serialize};

#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "MEMBER#<id>", sk = "MEMBER", unique(org))]
struct Member {
    id: String,
    org: String,
    name: String,
}

fn main() {}
