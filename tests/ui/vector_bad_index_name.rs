use ddb_model::Table;

#[derive(Table)]
#[table(name = "shop", vector(name = "v1", attr = "look", dims = 3, metric = cosine))]
struct Shop;

fn main() {}
