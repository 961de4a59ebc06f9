use ddb_model::{Edge, Entity, Table};
use serde::{Deserialize, Serialize};

#[derive(Table)]
#[table(name = "kv", no_sort_key)]
struct Kv;

#[derive(Entity, Edge, Serialize, Deserialize)]
#[entity(table = Kv, pk = "USER#<follower>#<followee>")]
#[edge(from = follower, to = followee, inverse(pk = "USER#<followee>", sk = "FOLLOWER#<follower>"))]
struct Follow {
    follower: String,
    followee: String,
}

fn main() {}
