use ddb_model::KeyPart;

// `rename` goes on a variant.
#[derive(KeyPart)]
#[key_part(rename = "state")]
enum Status {
    Open,
    Closed,
}

fn main() {}
