use ddb_model::Entity;
use serde::{Deserialize, Serialize};

/// A number cannot hold a generated id.
#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "ORDER#<id>", sk = "ORDER")]
struct Order {
    id: String,
    #[generated(uuid7)]
    seq: u64,
}

/// A `String` can, with ddb-model's `uuid` feature, which this crate does not turn on.
#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "NOTE#<id>", sk = "NOTE")]
struct Note {
    #[generated(ulid)]
    id: String,
}

fn main() {}
