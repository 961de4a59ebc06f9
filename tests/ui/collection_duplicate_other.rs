use ddb_model::{Collection, Entity, Item};
use serde::{Deserialize, Serialize};

#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "USER#<id>", sk = "PROFILE")]
struct User {
    id: String,
}

#[derive(Collection)]
enum Items {
    User(User),
    // `other` once is enough.
    #[collection(other, other)]
    Other(Item),
}

fn main() {}
