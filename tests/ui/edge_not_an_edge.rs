use ddb_model::{Db, Entity};
use serde::{Deserialize, Serialize};

#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "USER#<id>", sk = "PROFILE")]
struct User {
    id: String,
}

fn demo(db: &Db) {
    let _ = db.edges::<User>();
}

fn main() {}
