use ddb_model::Table;

#[derive(Table)]
#[table(name = "app", pk = "id", sk = "id")]
struct App;

fn main() {}
