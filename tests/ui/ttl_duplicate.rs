use ddb_model::{Entity, Table};
use serde::{Deserialize, Serialize};

#[derive(Table)]
#[table(name = "app", ttl = "expires")]
struct App;

#[derive(Entity, Serialize, Deserialize)]
#[entity(table = App, pk = "SESSION#<id>", sk = "SESSION", ttl = expires, ttl = expires)]
struct Session {
    id: String,
    expires: u64,
}

fn main() {}
