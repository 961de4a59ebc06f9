use ddb_model::{Entity, Table};
use serde::{Deserialize, Serialize};
use std::time::SystemTime;

#[derive(Table)]
#[table(name = "app", ttl = "expires")]
struct App;

#[derive(Entity, Serialize, Deserialize)]
#[entity(table = App, pk = "SESSION#<id>", sk = "SESSION", updated_at = expires, ttl = expires)]
struct Session {
    id: String,
    expires: SystemTime,
}

fn main() {}
