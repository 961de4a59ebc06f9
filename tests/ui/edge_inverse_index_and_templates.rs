use ddb_model::{Edge, Entity};
use serde::{Deserialize, Serialize};

#[derive(Entity, Edge, Serialize, Deserialize)]
#[entity(pk = "USER#<follower>", sk = "FOLLOWS#<followee>")]
#[index(gsi1, pk = "USER#<followee>", sk = "FOLLOWER#<follower>")]
#[edge(from = follower, to = followee, inverse(index = gsi1, pk = "USER#<followee>"))]
struct Follow {
    follower: String,
    followee: String,
}

fn main() {}
