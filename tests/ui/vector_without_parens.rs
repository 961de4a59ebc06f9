use ddb_model::Table;

#[derive(Table)]
#[table(name = "shop", vector)]
struct Shop;

fn main() {}
