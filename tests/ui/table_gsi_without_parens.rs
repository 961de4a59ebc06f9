use ddb_model::Table;

#[derive(Table)]
#[table(name = "app", gsi = "gsi1")]
struct App;

fn main() {}
