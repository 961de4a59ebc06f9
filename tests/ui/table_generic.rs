use ddb_model::Table;

#[derive(Table)]
#[table(name = "app")]
struct App<T>(T);

fn main() {}
