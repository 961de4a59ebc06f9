use ddb_model::KeyPart;

#[derive(KeyPart)]
struct Price(f64);

fn main() {}
