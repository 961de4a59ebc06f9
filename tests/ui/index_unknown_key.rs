use ddb_model::Entity;
use serde::{Deserialize, Serialize};

#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "USER#<id>", sk = "PROFILE")]
#[index(gsi1, pk = "ORG#<org>", sk = "USER#<id>", projection = "all")]
struct User {
    id: String,
    org: String,
}

fn main() {}
