use ddb_model::prelude::*;
use serde::{Deserialize, Serialize};

#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "USER#<user>", sk = "MSG#<id>")]
#[index(gsi1, pk = "UNREAD#<user>", sk = "MSG#<id>", when = unread)]
struct Message {
    user: String,
    id: u32,
    unread: bool,
}

async fn mark_read(db: &Db) -> Result<Message, Error> {
    Message::update(db, "ann", 1u32).set(Message::UNREAD, false).await
}

fn main() {}
