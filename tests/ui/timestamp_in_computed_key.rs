use ddb_model::Entity;
use serde::{Deserialize, Serialize};

fn day_of(at: &u64) -> u64 {
    at / 86_400_000
}

#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "DOC#<id>", updated_at = updated)]
#[index(gsi1, pk = "DAY#<day>", sk = "DOC#<id>", computed(day: u64 = day_of(updated)))]
struct Doc {
    id: String,
    updated: u64,
}

fn main() {}
