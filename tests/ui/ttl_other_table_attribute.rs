use ddb_model::{Entity, Table};
use serde::{Deserialize, Serialize};
use std::time::SystemTime;

#[derive(Table)]
#[table(name = "app", ttl = "expires")]
struct App;

#[derive(Entity, Serialize, Deserialize)]
#[entity(table = App, pk = "SESSION#<id>", sk = "SESSION", ttl = until)]
struct Session {
    id: String,
    until: SystemTime,
}

fn main() {}
