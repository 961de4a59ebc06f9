use ddb_model::{Edge, Entity};
use serde::{Deserialize, Serialize};

#[derive(Entity, Edge, Serialize, Deserialize)]
#[entity(pk = "USER#<a>", sk = "FRIEND#<b>")]
#[edge(from = a, to = b, inverse = none, symmetric)]
struct Friend {
    a: String,
    b: String,
}

fn main() {}
