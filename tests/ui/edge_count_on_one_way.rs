use ddb_model::{Edge, Entity};
use serde::{Deserialize, Serialize};

#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "POST#<id>", sk = "POST")]
struct Post {
    id: String,
    likes: u64,
}

#[derive(Entity, Edge, Serialize, Deserialize)]
#[entity(pk = "USER#<user>", sk = "LIKES#<post>")]
#[edge(from = user, to = post, inverse = none, count = Post::LIKES)]
struct Like {
    user: String,
    post: String,
}

fn main() {}
