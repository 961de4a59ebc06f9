use ddb_model::{Edge, Entity};
use serde::{Deserialize, Serialize};

#[derive(Entity, Edge, Serialize, Deserialize)]
#[entity(pk = "DEVICE#<a>", sk = "LINK#<b>")]
#[edge(from = a, to = b, symmetric)]
struct Follow {
    a: u32,
    b: String,
}

fn main() {}
