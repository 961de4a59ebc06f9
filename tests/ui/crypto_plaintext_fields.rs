use ddb_model::prelude::*;
use serde::{Deserialize, Serialize};

fn upper(s: &String) -> String {
    s.to_uppercase()
}

// Every field the library or the service reads in plaintext: `#[encrypt]` is refused on it.
#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "ORG#<org>", sk = "USER#<id>", version = version, created_at = created, ttl = expires)]
#[index(gsi1, pk = "EMAIL#<email>", sk = "<name>")]
#[index(gsi2, pk = "BRAND#<key>", computed(key: String = upper(brand)))]
struct User {
    #[encrypt]
    org: String,
    #[encrypt]
    id: String,
    #[encrypt]
    email: String,
    #[encrypt]
    name: String,
    #[encrypt]
    brand: String,
    #[encrypt]
    version: u64,
    #[encrypt]
    created: u64,
    #[encrypt]
    expires: u64,
    #[encrypt]
    #[unique]
    phone: String,
    // Signing them is fine: every attribute is signed.
    #[sign_only]
    nick: String,
}

#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "DOC#<id>", sk = "DOC")]
struct Doc {
    #[entity(from_key)]
    #[encrypt]
    id: String,
}

fn main() {}
