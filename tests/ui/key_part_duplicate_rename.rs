use ddb_model::KeyPart;

#[derive(KeyPart)]
enum Status {
    #[key_part(rename = "open")]
    Open,
    #[key_part(rename = "open")]
    Reopened,
}

fn main() {}
