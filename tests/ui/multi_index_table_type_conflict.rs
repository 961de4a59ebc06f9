use ddb_model::Table;

#[derive(Table)]
#[table(
    name = "shop",
    gsi(name = "by_status", pk = ["tenant"], sk = ["priority": N]),
    gsi(name = "by_priority", pk = ["priority"])
)]
struct Shop;
fn main() {}
