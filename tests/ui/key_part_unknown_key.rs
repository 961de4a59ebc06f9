use ddb_model::KeyPart;

#[derive(KeyPart)]
#[key_part(rename_variants = "lowercase")]
enum Status {
    Open,
    Closed,
}

fn main() {}
