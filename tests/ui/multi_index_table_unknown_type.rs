use ddb_model::Table;

#[derive(Table)]
#[table(name = "shop", gsi(name = "by_status", pk = ["tenant"], sk = ["priority": Int]))]
struct Shop;
fn main() {}
