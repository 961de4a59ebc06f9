use ddb_model::Table;

#[derive(Table)]
#[table(name = "app", gsi(name = "by_type", pk = "_type"))]
struct App;

fn main() {}
