use ddb_model::Entity;
use serde::{Deserialize, Serialize};

#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "USER#<id>", sk = "PROFILE")]
#[index(gsi1, pk = "ORG#<org>", sk = "USER#<id>")]
struct User {
    id: String,
    #[entity(from_key, none_as_null)]
    org: Option<String>,
}

fn main() {}
