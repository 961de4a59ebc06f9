use ddb_model::Table;

#[derive(Table)]
#[table(name = "app", gsi(name = "gsi1", pk = "gsi1pk", projection = "all"))]
struct App;

fn main() {}
