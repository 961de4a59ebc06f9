use ddb_model::Table;

#[derive(Table)]
#[table(name = "app", gsi(name = "gsi1", pk = "gsi1key", sk = "gsi1key"))]
struct App;

fn main() {}
