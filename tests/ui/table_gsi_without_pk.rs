use ddb_model::Table;

#[derive(Table)]
#[table(name = "app", gsi(name = "gsi1", sk = "gsi1sk"))]
struct App;

fn main() {}
