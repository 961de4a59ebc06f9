use ddb_model::{Entity, Table};
use serde::{Deserialize, Serialize};

#[derive(Table)]
#[table(name = "app", gsi(name = "gsi1", pk = "gsi1pk", sk = "gsi1sk"),
        gsi(name = "gsi2", pk = "gsi2pk", sk = "gsi2sk"))]
struct App;

// Two keys on one index need `when` on each.
#[derive(Entity, Serialize, Deserialize)]
#[entity(table = App, pk = "REPO#<owner>#<name>", sk = "REPO")]
#[index(gsi1, pk = "REPO#<owner>#<name>", sk = "REPO")]
#[index(gsi1, pk = "REPO#<parent>#<name>", sk = "FORK#<owner>", when = fork)]
struct Repo {
    owner: String,
    name: String,
    parent: String,
    fork: bool,
}

// And each its own query name.
#[derive(Entity, Serialize, Deserialize)]
#[entity(table = App, pk = "DOC#<id>", sk = "DOC")]
#[index(gsi1, pk = "A#<id>", sk = "A", when = a)]
#[index(gsi1, pk = "B#<id>", sk = "B", when = b)]
#[index(gsi1, pk = "C#<id>", sk = "C", when = c, query = x)]
#[index(gsi1, pk = "D#<id>", sk = "D", when = d, query = x)]
struct Doc {
    id: String,
    a: bool,
    b: bool,
    c: bool,
    d: bool,
}

// A query name is one access path's.
#[derive(Entity, Serialize, Deserialize)]
#[entity(table = App, pk = "TAG#<id>", sk = "TAG")]
#[index(gsi2, pk = "T#<id>", sk = "T")]
#[index(gsi1, pk = "U#<id>", sk = "U", when = u, query = gsi2)]
struct Tag {
    id: String,
    u: bool,
}

fn main() {}
