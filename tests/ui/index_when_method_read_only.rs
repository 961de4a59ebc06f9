use ddb_model::prelude::*;
use serde::{Deserialize, Serialize};

// An index chosen by a `when` *method*: an update cannot evaluate the method, so the fields
// of the index key stay read-only (a `when` field would make them writable).
#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "USER#<user>", sk = "MSG#<id>")]
#[index(gsi1, pk = "FOLDER#<folder>", sk = "MSG#<id>", when = is_filed)]
struct Message {
    user: String,
    id: u32,
    folder: String,
}

impl Message {
    fn is_filed(&self) -> bool {
        !self.folder.is_empty()
    }
}

async fn file(db: &Db) -> Result<Message, Error> {
    Message::update(db, "ann", 1u32).set(Message::FOLDER, "inbox").await
}

fn main() {}
