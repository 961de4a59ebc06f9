use ddb_model::Entity;
use serde::{Deserialize, Serialize};

// Each format on a type it does not apply to: an error at the placeholder.
#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "USER#<name:unpadded>", sk = "AT#<n:iso8601(ms)>#<m:lower>")]
struct User {
    name: String,
    n: u32,
    m: u64,
}

fn main() {}
