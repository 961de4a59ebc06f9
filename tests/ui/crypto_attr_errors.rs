use ddb_model::prelude::*;
use serde::{Deserialize, Serialize};

#[derive(Entity, Serialize, Deserialize, Default)]
#[entity(pk = "DOC#<id>", sk = "DOC")]
struct Doc {
    id: String,
    #[encrypt(aes)]
    with_args: String,
    #[sign_only = true]
    with_value: String,
    #[encrypt]
    #[sign_only]
    both: String,
    #[encrypt]
    #[encrypt]
    twice: String,
    #[serde(skip)]
    #[encrypt]
    skipped: String,
    #[serde(flatten)]
    #[sign_only]
    flat: Inner,
}

#[derive(Serialize, Deserialize, Default)]
struct Inner {
    a: String,
}

fn main() {}
