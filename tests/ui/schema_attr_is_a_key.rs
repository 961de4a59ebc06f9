use ddb_model::Table;

#[derive(Table)]
#[table(name = "app", pk = "pk", sk = "sk", schema_attr = "sk")]
struct App;

fn main() {}
