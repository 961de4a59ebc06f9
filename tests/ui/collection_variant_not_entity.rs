use ddb_model::{Collection, Entity};
use serde::{Deserialize, Serialize};

#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "USER#<id>", sk = "PROFILE")]
struct User {
    id: String,
}

#[derive(Collection)]
enum Items {
    User(User),
    Name(String),
}

fn main() {}
