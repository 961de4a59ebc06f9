use ddb_model::{Edge, Entity};
use serde::{Deserialize, Serialize};

#[derive(Entity, Edge, Serialize, Deserialize)]
#[entity(pk = "ORG#<org>", sk = "FOLLOWS#<followee>#<follower>")]
#[edge(from = follower, to = followee, inverse(pk = "USER#<followee>", sk = "FOLLOWER#<follower>"))]
struct Follow {
    org: String,
    follower: String,
    followee: String,
}

fn main() {}
