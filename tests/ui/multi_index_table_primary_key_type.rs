use ddb_model::Table;

#[derive(Table)]
#[table(name = "shop", gsi(name = "by_pk", pk = ["tenant"], sk = ["pk": N]))]
struct Shop;
fn main() {}
