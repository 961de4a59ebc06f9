use ddb_model::{Edge, Entity};
use serde::{Deserialize, Serialize};

#[derive(Entity, Edge, Serialize, Deserialize)]
#[entity(pk = "USER#<user>", sk = "LIKES#<post>")]
#[edge(from = user, to = post, inverse = None)]
struct Like {
    user: String,
    post: String,
}

#[derive(Entity, Edge, Serialize, Deserialize)]
#[entity(pk = "USER#<user>", sk = "STARS#<repo>")]
#[edge(from = user, to = repo, inverse = "none")]
struct Star {
    user: String,
    repo: String,
}

fn main() {}
