use ddb_model::{Edge, Entity, Table};
use serde::{Deserialize, Serialize};

#[derive(Table)]
#[table(name = "app", gsi(name = "gsi1", pk = "gsi1pk", sk = "gsi1sk"))]
struct App;

#[derive(Entity, Edge, Serialize, Deserialize)]
#[entity(table = App, pk = "USER#<follower:verbatim>", sk = "FOLLOWS#<followee>", no_type_attr)]
#[edge(from = follower, to = followee, inverse(pk = "USER#<followee:verbatim>", sk = "BY#<follower>"))]
struct Follows {
    follower: String,
    followee: String,
}

fn main() {}
