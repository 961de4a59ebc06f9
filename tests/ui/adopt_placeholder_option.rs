use ddb_model::Entity;
use serde::{Deserialize, Serialize};

#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "USER#<id:raw>", sk = "<name:Verbatim>")]
struct User {
    id: String,
    name: String,
}

fn main() {}
