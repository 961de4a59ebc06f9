use ddb_model::Entity;
use serde::{Deserialize, Serialize};

#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "USER#<id>", sk = "PROFILE", constant(__edb_v__ = "1", __edb_v__ = "2"))]
#[entity(constant(app = "a"))]
#[entity(constant("app" = "b"))]
struct User {
    id: String,
}

fn main() {}
