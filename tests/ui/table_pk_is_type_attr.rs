use ddb_model::Table;

#[derive(Table)]
#[table(name = "app", pk = "_type")]
struct App;

fn main() {}
