use ddb_model::Entity;
use serde::{Deserialize, Serialize};

#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "USER#<id>", sk = "PROFILE")]
#[index(gsi1, pk = "SCORE#<score>", sk = "USER#<id>")]
struct User {
    id: String,
    score: f64,
}

fn main() {}
