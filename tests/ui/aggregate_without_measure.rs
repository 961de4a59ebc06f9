// An aggregate declared without a measure cannot be processed.
use ddb_model::prelude::*;
use ddb_model::stream::ViewType;
use ddb_model::stream::aggregate::{Aggregate, Processor};
use serde::{Deserialize, Serialize};

#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "ORDER#<id>", sk = "ORDER")]
struct Order {
    id: String,
    customer: String,
}

fn process(db: &Db) {
    let empty = Aggregate::new("by_customer", |o: &Order| Some(o.customer.clone()));
    let _ = Processor::new(db, &empty, ViewType::NewImage);
}

fn main() {}
