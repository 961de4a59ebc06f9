use ddb_model::{Edge, Entity};
use serde::{Deserialize, Serialize};

#[derive(Entity, Edge, Serialize, Deserialize)]
#[entity(pk = "USER#<follower>", sk = "FOLLOWS#<followee>")]
#[edge(from = follower, to = followee, inverse(pk = "USER#<followee>", sk = "FOLLOWS#<follower>"))]
struct Follow {
    follower: String,
    followee: String,
}

fn main() {}
