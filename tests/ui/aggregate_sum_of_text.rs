// A sum measures a whole number of each item, not a text field.
use ddb_model::prelude::*;
use ddb_model::stream::aggregate::Aggregate;
use serde::{Deserialize, Serialize};

#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "ORDER#<id>", sk = "ORDER")]
struct Order {
    id: String,
    customer: String,
    note: String,
}

fn main() {
    let _ = Aggregate::new("by_customer", |o: &Order| Some(o.customer.clone()))
        .sum("notes", |o: &Order| o.note.clone());
}
