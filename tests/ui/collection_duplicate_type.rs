use ddb_model::{Collection, Entity};
use serde::{Deserialize, Serialize};

#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "USER#<id>", sk = "PROFILE")]
struct User {
    id: String,
}

#[derive(Collection)]
enum Items {
    Profile(User),
    Again(User),
}

fn main() {}
