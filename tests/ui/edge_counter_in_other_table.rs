use ddb_model::{Edge, Entity, Table};
use serde::{Deserialize, Serialize};

#[derive(Table)]
#[table(name = "people")]
struct People;

#[derive(Entity, Serialize, Deserialize)]
#[entity(table = People, pk = "USER#<id>", sk = "PROFILE")]
struct User {
    id: String,
    followers: u64,
}

#[derive(Entity, Edge, Serialize, Deserialize)]
#[entity(pk = "USER#<follower>", sk = "FOLLOWS#<followee>")]
#[edge(
    from = follower,
    to = followee,
    inverse(pk = "USER#<followee>", sk = "FOLLOWER#<follower>"),
    to_count = User::FOLLOWERS
)]
struct Follow {
    follower: String,
    followee: String,
}

fn main() {}
