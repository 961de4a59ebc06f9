use ddb_model::{Db, Entity, UpdateVerbs};
use serde::{Deserialize, Serialize};

#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "DOC#<id>", sk = "DOC", updated_at = updated)]
struct Doc {
    id: String,
    body: String,
    updated: u64,
}

async fn touch(db: &Db) {
    let _ = Doc::update(db, "d").set(Doc::UPDATED, 5u64).await;
}

fn main() {}
