use ddb_model::Table;

#[derive(Table)]
#[table(name = "app", pk = "pk", sk = "sk", ttl = "sk")]
struct App;

fn main() {}
