use ddb_model::KeyPart;

// Under `lowercase`, both variants would be keyed `newyork`.
#[derive(KeyPart)]
#[key_part(rename_all = "lowercase")]
enum City {
    NewYork,
    Newyork,
}

fn main() {}
