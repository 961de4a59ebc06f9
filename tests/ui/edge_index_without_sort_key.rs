use ddb_model::{Edge, Entity, Table};
use serde::{Deserialize, Serialize};

#[derive(Table)]
#[table(name = "app", gsi(name = "gsi2", pk = "gsi2pk"))]
struct App;

#[derive(Entity, Edge, Serialize, Deserialize)]
#[entity(table = App, pk = "USER#<follower>", sk = "FOLLOWS#<followee>")]
#[index(gsi2, pk = "USER#<followee>")]
#[edge(from = follower, to = followee, inverse(index = gsi2))]
struct Follow {
    follower: String,
    followee: String,
}

fn main() {}
