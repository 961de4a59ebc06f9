use ddb_model::Entity;
use serde::{Deserialize, Serialize};

#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "USER#<id>", sk = "PROFILE", constant(kind = "user", "__edb_v__" = "1"))]
struct User {
    id: String,
    kind: String,
    #[serde(rename = "__edb_v__")]
    version: String,
}

#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "ORDER#<id>", sk = "ORDER", type_attr = "kind", constant(kind = "order"))]
struct Order {
    id: String,
}

fn main() {}
