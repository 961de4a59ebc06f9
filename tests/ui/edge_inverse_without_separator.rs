use ddb_model::{Edge, Entity};
use serde::{Deserialize, Serialize};

#[derive(Entity, Edge, Serialize, Deserialize)]
#[entity(pk = "USER#<follower>", sk = "FOLLOWS#<followee>")]
#[edge(from = follower, to = followee, inverse(pk = "USER#<followee>x", sk = "FOLLOWER#<follower>"))]
struct Follow {
    follower: u64,
    followee: u64,
}

fn main() {}
