use ddb_model::{Edge, Entity};
use serde::{Deserialize, Serialize};

#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "POST#<id>", sk = "POST")]
struct Post {
    id: String,
    score: f64,
}

#[derive(Entity, Edge, Serialize, Deserialize)]
#[entity(pk = "USER#<user>", sk = "LIKES#<post>")]
#[edge(from = user, to = post, inverse = none, to_count = Post::SCORE)]
struct Like {
    user: String,
    post: String,
}

fn main() {}
