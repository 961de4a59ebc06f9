use ddb_model::{Edge, Entity};
use serde::{Deserialize, Serialize};

#[derive(Entity, Edge, Serialize, Deserialize)]
#[entity(pk = "USER#<follower>", sk = "FOLLOWS#<followee>")]
#[index(gsi1, pk = "USER#<follower>", sk = "FOLLOWER#<followee>")]
#[edge(from = follower, to = followee, inverse(index = gsi1))]
struct Follow {
    follower: String,
    followee: String,
}

fn main() {}
