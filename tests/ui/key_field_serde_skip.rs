use ddb_model::Entity;
use serde::{Deserialize, Serialize};

#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "USER#<id>", sk = "PROFILE")]
struct User {
    #[serde(skip)]
    id: String,
    email: String,
}

fn main() {}
