use ddb_model::Entity;
use serde::{Deserialize, Serialize};

#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "ORDER#<id>", sk = "ORDER", version = version, created_at = created)]
struct Order {
    #[generated(uuid8)]
    id: String,
    #[generated]
    other: String,
    #[generated(ulid)]
    #[generated(uuid7)]
    twice: String,
    #[generated(uuid7)]
    #[serde(skip)]
    skipped: String,
    #[generated(uuid7)]
    version: u64,
    #[generated(ulid)]
    created: u64,
}

fn main() {}
