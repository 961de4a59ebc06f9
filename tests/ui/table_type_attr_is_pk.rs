use ddb_model::Table;

#[derive(Table)]
#[table(name = "app", pk = "pk", type_attr = "pk")]
struct App;

fn main() {}
