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
    // Forward only: fine.
    let _ = follows.neighbourhood("ann", 2).budget(10);
    // Backwards.
    let _ = follows.neighbourhood("ann", 2).direction(ddb_model::edge::Direction::Both);
    let _ = follows.shortest_path("ann", "bob");
    let _ = follows.also_linked("bob");
    let _ = follows.recommend("ann");
}

fn main() {}
