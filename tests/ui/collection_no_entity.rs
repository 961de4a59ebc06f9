use ddb_model::{Collection, Item};

#[derive(Collection)]
enum Items {
    #[collection(other)]
    Other(Item),
}

fn main() {}
