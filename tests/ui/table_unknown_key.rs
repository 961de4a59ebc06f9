use ddb_model::Table;

#[derive(Table)]
#[table(name = "app", partition_key = "pk")]
struct App;

fn main() {}
