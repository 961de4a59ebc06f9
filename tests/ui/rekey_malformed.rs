use ddb_model::Entity;
use serde::{Deserialize, Serialize};

// `rekey` without its templates.
#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "USER#<id>", sk = "PROFILE", rekey)]
struct A {
    id: String,
}

// No partition key template.
#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "USER#<id>", sk = "PROFILE", rekey(sk = "P"))]
struct B {
    id: String,
}

// An unknown key, and a repeated one.
#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "USER#<id>", sk = "PROFILE", rekey(pk = "U#<id>", pk = "V#<id>", sk = "P", index = "gsi1"))]
struct C {
    id: String,
}

// Two declarations.
#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "USER#<id>", sk = "PROFILE", rekey(pk = "U#<id>", sk = "P"), rekey(pk = "V#<id>", sk = "P"))]
struct D {
    id: String,
}

fn main() {}
