use ddb_model::{Edge, Entity};
use serde::{Deserialize, Serialize};

#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "USER#<id>", sk = "PROFILE")]
struct User {
    id: String,
    followers: u64,
    name: String,
}

#[derive(Entity, Edge, Serialize, Deserialize)]
#[entity(pk = "USER#<follower>", sk = "FOLLOWS#<followee>")]
#[edge(
    from = follower,
    to = followee,
    inverse(pk = "USER#<followee>", sk = "FOLLOWER#<follower>"),
    to_count(User::FOLLOWERS, shards = "16")
)]
struct Follow {
    follower: String,
    followee: String,
}

fn main() {}
