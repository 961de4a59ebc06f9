use ddb_model::{Edge, Entity};
use serde::{Deserialize, Serialize};

// Every mistake of one #[edge] is reported in one compile.
#[derive(Entity, Edge, Serialize, Deserialize)]
#[entity(pk = "USER#<follower>", sk = "FOLLOWS#<followee>")]
#[edge(from = folower, to = followee, inverse(pk = "USER#<followee>"), count = User::LINKS, colour = 1)]
struct Follow {
    follower: String,
    followee: String,
}

fn main() {}
