use ddb_model::{Db, Entity};
use serde::{Deserialize, Serialize};

// Unpadded integers and texts in one case do not sort as their values: their levels have no
// range methods.
#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "USER#<id>", sk = "N#<n:unpadded>#<name:lower>")]
struct Entry {
    id: String,
    n: u32,
    name: String,
}

async fn ranges(db: &Db) {
    let _ = Entry::query(db, "a").n_between(1u32, 5u32).await;
    let _ = Entry::query(db, "a").n(1u32).name_begins_with("an").await;
    let _ = Entry::query(db, "a").n(1u32).name("Ann").await;
}

fn main() {}
