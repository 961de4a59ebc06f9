use ddb_model::KeyPart;

#[derive(KeyPart)]
enum Status {
    #[key_part(rename = "")]
    Open,
    Closed,
}

fn main() {}
