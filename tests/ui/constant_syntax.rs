use ddb_model::Entity;
use serde::{Deserialize, Serialize};

#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "A#<id>", sk = "A", constant = "x")]
struct A {
    id: String,
}

#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "B#<id>", sk = "B", constant())]
struct B {
    id: String,
}

#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "C#<id>", sk = "C", constant(__edb_v__))]
struct C {
    id: String,
}

#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "D#<id>", sk = "D", constant(__edb_v__ = 1))]
struct D {
    id: String,
}

#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "E#<id>", sk = "E", constant(__edb_v__ = version))]
struct E {
    id: String,
}

#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "F#<id>", sk = "F", constant(1 = "x"))]
struct F {
    id: String,
}

#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "G#<id>", sk = "G", constant(a = "1" b = "2"))]
struct G {
    id: String,
}

fn main() {}
