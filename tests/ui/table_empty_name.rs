use ddb_model::Table;

#[derive(Table)]
#[table(name = "")]
struct App;

fn main() {}
