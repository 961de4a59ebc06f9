use ddb_model::{Edge, Entity};
use serde::{Deserialize, Serialize};

#[derive(Entity, Edge, Serialize, Deserialize)]
#[entity(pk = "USER#<follower>", sk = "FOLLOWS#<followee>")]
#[edge(from = follower, to = followee, symmetric, from_count = User::FOLLOWING)]
struct Follow {
    follower: String,
    followee: String,
}

fn main() {}
