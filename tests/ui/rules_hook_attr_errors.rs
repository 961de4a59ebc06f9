use ddb_model::Entity;
use serde::{Deserialize, Serialize};

#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "USER#<id>", sk = "PROFILE", validate = "check", after_read)]
struct User {
    id: String,
}

#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "ORDER#<id>", sk = "ORDER", validate = check(1), after_read = fix)]
#[entity(after_read = fix)]
struct Order {
    id: String,
}

fn fix(_: &mut Order) {}

fn main() {}
