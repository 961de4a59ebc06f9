use ddb_model::Entity;
use serde::{Deserialize, Serialize};

#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "USER#<id>", sk = "PROFILE")]
struct User<T> {
    id: String,
    extra: T,
}

fn main() {}
