use ddb_model::KeyPart;

#[derive(KeyPart)]
enum Status {
    Open,
    Closed(f64),
}

#[derive(KeyPart)]
struct Point {
    x: u32,
    y: f32,
}

fn main() {}
