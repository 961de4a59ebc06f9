use ddb_model::Table;

#[derive(Table)]
#[table(name = "app", no_sort_key = true)]
struct App;

fn main() {}
