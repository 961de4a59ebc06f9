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
    #[collection(other)]
    First(Item),
    #[collection(other)]
    Second(Item),
}

fn main() {}
