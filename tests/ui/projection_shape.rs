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
#[projection(entity = Customer)]
struct Card(String);

#[derive(Projection)]
#[projection(entity = Customer)]
enum Either {
    Name { name: String },
}

#[derive(Projection)]
#[projection(entity = Customer)]
struct Generic<T> {
    name: T,
}

fn main() {}
