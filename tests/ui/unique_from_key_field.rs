use ddb_model::Entity;
use serde::{Deserialize, Serialize};

#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "USER#<id>", sk = "PROFILE#<region>")]
struct User {
    id: String,
    #[unique]
    #[entity(from_key)]
    region: String,
}

fn main() {}
