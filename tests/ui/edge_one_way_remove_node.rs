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
    // The edges a node starts: fine.
    let _ = follows.remove_outgoing("ann");
    // The edges that end at a node cannot be found.
    let _ = follows.remove_node("ann");
    let _ = follows.remove_incoming("ann");
}

fn main() {}
