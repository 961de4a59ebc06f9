use ddb_model::Entity;
use serde::{Deserialize, Serialize};

#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "USER#<id>", sk = "PROFILE")]
#[index(gsi1, pk = "ORG#<org>", sk = "USER#<id>")]
#[index(gsi1, pk = "EMAIL#<email>", sk = "USER#<id>")]
struct User {
    id: String,
    org: String,
    email: String,
}

fn main() {}
