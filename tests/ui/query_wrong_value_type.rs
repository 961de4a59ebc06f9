use ddb_model::{Db, Entity};
use serde::{Deserialize, Serialize};

#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "USER#<user>", sk = "ORDER#<year>#<seq>")]
struct Order {
    user: String,
    year: i32,
    seq: u64,
}

async fn read(db: &Db) {
    let _ = Order::query(db, "alice").year("2024").all().await;
}

fn main() {}
