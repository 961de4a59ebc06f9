use ddb_model::{Entity, Table};
use serde::{Deserialize, Serialize};

#[derive(Table)]
#[table(name = "app", gsi(name = "gsi1", pk = "gsi1pk", sk = "gsi1sk"))]
struct App;

// `7` can be a digit of the sequence number, and `-` can start a negative year.
#[derive(Entity, Serialize, Deserialize)]
#[entity(table = App, pk = "USER#<user>", sk = "ORDER#<seq>7<item>")]
#[index(gsi1, pk = "YEAR#<year>-", sk = "<item>")]
struct Order {
    user: String,
    seq: u32,
    item: String,
    year: Option<i32>,
}

fn main() {}
