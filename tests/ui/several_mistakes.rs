use ddb_model::Entity;
use serde::{Deserialize, Serialize};

#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "USER#<user_id>#<>", tabel = App, sk = "PROFILE")]
#[index(gsi1, pk = "ORG#<organisation>", sk = "USER#<id>")]
struct User {
    id: String,
    org: String,
}

fn main() {}
