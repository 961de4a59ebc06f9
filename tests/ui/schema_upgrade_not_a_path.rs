use ddb_model::Entity;
use serde::{Deserialize, Serialize};

#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "USER#<id>", sk = "PROFILE", schema = 2, upgrade = "upgrade_user")]
struct User {
    id: String,
}

fn main() {}
