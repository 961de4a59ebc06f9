use ddb_model::prelude::*;
use serde::{Deserialize, Serialize};

// An encrypted field has no attribute path: a condition, a filter, an update or a projection
// on it would compare or write ciphertext.
#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "PATIENT#<id>", sk = "RECORD")]
struct Patient {
    id: String,
    #[encrypt]
    ssn: String,
    #[sign_only]
    plan: String,
}

fn main() {
    let _signed = Patient::PLAN.eq("gold");
    let _encrypted = Patient::SSN.eq("123");
}
