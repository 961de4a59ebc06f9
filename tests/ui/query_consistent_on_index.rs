use ddb_model::{Db, Entity, Table};
use serde::{Deserialize, Serialize};

#[derive(Table)]
#[table(name = "app", pk = "pk", sk = "sk", gsi(name = "gsi1", pk = "gsi1pk", sk = "gsi1sk"))]
struct App;

#[derive(Entity, Serialize, Deserialize)]
#[entity(table = App, pk = "USER#<id>", sk = "PROFILE")]
#[index(gsi1, pk = "ORG#<org>", sk = "USER#<id>")]
struct User {
    id: String,
    org: String,
}

async fn read(db: &Db<App>) {
    // Global secondary indexes have no strongly consistent reads.
    let _ = User::query_gsi1(db, "acme").consistent().all().await;
}

fn main() {}
