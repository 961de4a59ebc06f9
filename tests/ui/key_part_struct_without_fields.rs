use ddb_model::KeyPart;

#[derive(KeyPart)]
struct Nothing;

#[derive(KeyPart)]
struct Empty {}

fn main() {}
