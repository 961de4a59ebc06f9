use ddb_model::{Entity, UpdateVerbs};
use serde::{Deserialize, Serialize};

#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "USER#<id>", sk = "PROFILE")]
struct User {
    id: String,
    email: String,
}

fn f(db: &ddb_model::Db) {
    let _ = User::update(db, "id").add(User::EMAIL, "x");
}

fn main() {}
