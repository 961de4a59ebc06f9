use ddb_model::{Edge, Entity};
use serde::{Deserialize, Serialize};

#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "POST#<id>", sk = "POST")]
struct Post {
    id: String,
    likes: u64,
}

#[derive(Entity, Edge, Serialize, Deserialize)]
#[entity(pk = "USER#<a>", sk = "FOLLOWS#<b>")]
#[edge(from = a, to = b, inverse = none)]
struct Follow {
    a: String,
    b: String,
}

fn demo(db: &ddb_model::Db) {
    let follows = Follow::edges(db);
    // Targets in common read outgoing edges only: fine.
    let _ = follows.common_targets("ann", "bob");
    // These read the edges that end at a node.
    let _ = follows.mutual("ann");
    let _ = follows.common_sources("ann", "bob");
}

fn main() {}
