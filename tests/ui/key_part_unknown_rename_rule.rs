use ddb_model::KeyPart;

// serde's rule names are case-sensitive: `lowercase`, not `lower`.
#[derive(KeyPart)]
#[key_part(rename_all = "lower")]
enum Status {
    Open,
    Closed,
}

fn main() {}
