use ddb_model::Entity;
use serde::{Deserialize, Serialize};

// A format that does not read every value back as itself: not on a `from_key` field, and the
// same in every key that names the field.
#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "USER#<name:lower>", sk = "ORG#<org:upper>")]
#[index(gsi1, pk = "ORG#<org>", sk = "<name:lower>")]
struct User {
    #[entity(from_key)]
    name: String,
    org: String,
}

fn main() {}
