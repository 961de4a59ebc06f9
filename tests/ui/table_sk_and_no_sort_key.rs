use ddb_model::Table;

#[derive(Table)]
#[table(name = "app", sk = "sk", no_sort_key)]
struct App;

fn main() {}
