use ddb_model::Entity;
use serde::{Deserialize, Serialize};

#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "DOC#<id>", sk = "DOC", version = version)]
struct Doc {
    id: String,
    #[serde(skip)]
    version: u64,
}

fn main() {}
