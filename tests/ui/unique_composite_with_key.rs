use ddb_model::Entity;
use serde::{Deserialize, Serialize};

#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "MEMBER#<org>", sk = "MEMBER#<id>", unique(org, id, name))]
struct Member {
    id: String,
    org: String,
    name: String,
}

fn main() {}
