use ddb_model::KeyPart;

#[derive(KeyPart)]
enum Status {
    Open,
    Closed(String),
}

fn main() {}
