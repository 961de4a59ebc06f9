use ddb_model::Entity;
use serde::{Deserialize, Serialize};

#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "ORDER#<user>", sk = "SEQ#<seq>")]
struct Order {
    user: String,
    seq: u64,
}

fn f(db: &ddb_model::Db) {
    let _ = Order::get(db, "alice", "7");
}

fn main() {}
