use ddb_model::Entity;
use serde::{Deserialize, Serialize};

struct App;

#[derive(Entity, Serialize, Deserialize)]
#[entity(table = App, pk = "USER#<id>", sk = "PROFILE")]
struct User {
    id: String,
}

fn main() {}
