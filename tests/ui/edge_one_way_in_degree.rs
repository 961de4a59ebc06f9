use ddb_model::{Edge, Entity};
use serde::{Deserialize, Serialize};

#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "POST#<id>", sk = "POST")]
struct Post {
    id: String,
    likes: u64,
}

#[derive(Entity, Edge, Serialize, Deserialize)]
#[entity(pk = "POST#<post>", sk = "LIKE#<user>")]
#[edge(from = post, to = user, inverse = none, from_count = Post::LIKES)]
struct Like {
    post: String,
    user: String,
}

async fn demo(db: &ddb_model::Db) {
    // The post's counter is the `from` count; nothing counts the likes of a user.
    let _ = Like::edges(db).out_degree("p1").await;
    let _ = Like::edges(db).in_degree("ann").await;
}

fn main() {}
