use ddb_model::{Edge, Entity, Table};
use serde::{Deserialize, Serialize};

#[derive(Table)]
#[table(name = "app", gsi(name = "gsi1", pk = "gsi1pk", sk = "gsi1sk"))]
struct App;

#[derive(Entity, Serialize, Deserialize)]
#[entity(table = App, pk = "USER#<user>", sk = "PROFILE")]
struct User {
    user: String,
}

#[derive(Entity, Edge, Serialize, Deserialize)]
#[entity(table = App, pk = "USER#<follower>", sk = "FOLLOWS#<followee>")]
#[edge(from = follower, to = followee, inverse(index = gsi1))]
#[index(gsi1, pk = "USER#<followee>", sk = "FOLLOWED_BY#<follower>")]
struct Follows {
    follower: String,
    followee: String,
    #[unique]
    note: String,
}

fn main() {}
