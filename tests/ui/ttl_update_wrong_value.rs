use ddb_model::prelude::*;
use serde::{Deserialize, Serialize};
use std::time::SystemTime;

#[derive(Table)]
#[table(name = "app", ttl = "expires")]
struct App;

#[derive(Entity, Serialize, Deserialize)]
#[entity(table = App, pk = "SESSION#<id>", sk = "SESSION", ttl = expires)]
struct Session {
    id: String,
    expires: SystemTime,
}

async fn extend(db: &Db<App>) -> Result<(), Error> {
    // Seconds where the field is a `SystemTime`, and `remove` of an expiry that is no `Option`.
    Session::update(db, "s").set(Session::EXPIRES, 1_900_000_000u64).await?;
    Session::update(db, "s").remove(Session::EXPIRES).await?;
    Ok(())
}

fn main() {}
