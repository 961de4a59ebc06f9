use ddb_model::KeyPart;

#[derive(KeyPart)]
#[key_part(rename_all = "lowercase")]
enum Status {
    Open,
    Closed,
}

fn main() {}
