use ddb_model::KeyPart;

#[derive(KeyPart)]
struct OrderId(u64, u64);

fn main() {}
