use ddb_model::{Edge, Entity};
use serde::{Deserialize, Serialize};

#[derive(Entity, Edge, Serialize, Deserialize)]
#[entity(pk = "POST#<post>", sk = "TAG#<tag>")]
#[edge(from = post, to = tag, inverse(pk = "TAG#<tag>", sk = "POST#<post>"))]
struct Tagged {
    post: u64,
    tag: String,
}

fn demo(db: &ddb_model::Db) {
    // Posts and tags are nodes of two kinds: a path alternates between them.
    let _ = Tagged::edges(db).shortest_path(1u64, 2u64);
}

fn main() {}
