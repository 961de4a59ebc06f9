use ddb_model::Entity;
use serde::{Deserialize, Serialize};

// Unique fields: their sentinel items name the item's key.
#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "USER#<id>", sk = "PROFILE", rekey(pk = "U#<id>", sk = "P"))]
struct A {
    id: String,
    #[unique]
    email: String,
}

// A field read back from the key.
#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "USER#<id>", sk = "PROFILE", rekey(pk = "U#<id>", sk = "P"))]
struct B {
    #[entity(from_key)]
    id: String,
}

// Told apart by its keys.
#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "USER#<id>", sk = "PROFILE", no_type_attr, rekey(pk = "U#<id>", sk = "P"))]
struct C {
    id: String,
}

// A tree node.
#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "ORG#<org>", sk = "EMP#<id>", rekey(pk = "EMP#<id>", sk = "ORG#<org>"))]
#[hierarchy(strategy = closure, parent = boss)]
struct Employee {
    org: String,
    id: String,
    boss: Option<String>,
}

fn main() {}
