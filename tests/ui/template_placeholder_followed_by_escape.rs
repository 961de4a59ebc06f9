use ddb_model::Entity;
use serde::{Deserialize, Serialize};

#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "USER#<user>", sk = "ORDER#<seq>%<item>")]
struct Order {
    user: String,
    seq: u32,
    item: String,
}

fn main() {}
