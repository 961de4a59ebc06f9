use ddb_model::{Entity, Table};
use serde::{Deserialize, Serialize};

#[derive(Table)]
#[table(name = "app", gsi(name = "gsi1", pk = "gsi1pk", sk = "gsi1sk"),
        gsi(name = "gsi2", pk = "gsi2pk", sk = "gsi2sk"))]
struct App;

#[derive(Entity, Serialize, Deserialize)]
#[entity(table = App, pk = "MSG#<id>", sk = "MSG")]
#[index(gsi1, pk = "UNREAD", sk = "<id>", when = status)]
#[index(gsi2, pk = "FLAGGED", sk = "<id>", when = flagged)]
struct Message {
    id: String,
    status: String,
}

#[derive(Entity, Serialize, Deserialize)]
#[entity(table = App, pk = "X#<id>", sk = "X")]
#[index(gsi1, pk = "X", sk = "<id>", when = "open", query = 7)]
struct Ticket {
    id: String,
    open: bool,
}

fn main() {}
