use ddb_model::{Db, Entity};
use serde::{Deserialize, Serialize};

#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "<country>", sk = "<state>#<city>#<zip>")]
struct Store {
    country: String,
    state: String,
    city: String,
    zip: String,
}

async fn skip(db: &Db) {
    // The city level comes after the state level.
    let _ = Store::query(db, "USA").city("OMAHA").all().await;
}

fn main() {}
