use ddb_model::Entity;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize)]
struct Profile {
    handle: String,
}

#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "USER#<id>", sk = "HANDLE#<profile>")]
struct User {
    id: String,
    #[serde(flatten)]
    profile: Profile,
}

fn main() {}
