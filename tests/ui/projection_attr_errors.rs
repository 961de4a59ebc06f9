use ddb_model::{Entity, Projection};
use serde::{Deserialize, Serialize};

#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "CUSTOMER#<id>", sk = "CUSTOMER")]
struct Customer {
    id: String,
    name: String,
    total: u64,
}

#[derive(Projection)]
#[projection(entity = Customer, table = App)]
struct Card {
    name: String,
}

#[derive(Projection)]
#[projection(entity = Customer, entity = Customer)]
struct Card2 {
    name: String,
}

#[derive(Projection)]
#[projection(entity = "Customer")]
struct Card3 {
    name: String,
}

#[derive(Projection)]
#[projection(entity)]
struct Card4 {
    name: String,
}

fn main() {}
