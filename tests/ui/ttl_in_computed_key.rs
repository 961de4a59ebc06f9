use ddb_model::{Entity, Table};
use serde::{Deserialize, Serialize};

#[derive(Table)]
#[table(name = "app", ttl = "expires", gsi(name = "gsi1", pk = "gsi1pk", sk = "gsi1sk"))]
struct App;

fn day_of(at: &u64) -> u64 {
    at / 86_400
}

#[derive(Entity, Serialize, Deserialize)]
#[entity(table = App, pk = "SESSION#<id>", sk = "SESSION", ttl = expires)]
#[index(gsi1, pk = "DAY#<day>", sk = "SESSION#<id>", computed(day: u64 = day_of(expires)))]
struct Session {
    id: String,
    expires: u64,
}

fn main() {}
