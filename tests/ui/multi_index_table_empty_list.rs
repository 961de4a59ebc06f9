use ddb_model::Table;

#[derive(Table)]
#[table(name = "shop", gsi(name = "by_status", pk = [], sk = ["priority": N]))]
struct Shop;
fn main() {}
