use ddb_model::Table;

#[derive(Table)]
#[table(name = "shop", gsi(name = "by_status", pk = ["tenant", "status"], sk = ["status"]))]
struct Shop;
fn main() {}
