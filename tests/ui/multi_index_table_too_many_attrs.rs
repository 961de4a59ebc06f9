use ddb_model::Table;

#[derive(Table)]
#[table(name = "shop", gsi(name = "wide", pk = ["a", "b", "c", "d", "e"], sk = ["f"]))]
struct Shop;
fn main() {}
