use ddb_model::Table;

#[derive(Table)]
#[table(name = "app", ttl = "")]
struct App;

fn main() {}
