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
#[edge(from = user, to = post, inverse = none, to_count = Post::LIKES)]
struct Like {
    user: String,
    post: String,
}

fn demo(db: &ddb_model::Db) {
    // Likes are stored in the user's partition only: a post's likers cannot be listed.
    let _ = Like::edges(db).incoming("p1");
}

fn main() {}
