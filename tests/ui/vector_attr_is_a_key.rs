use ddb_model::Table;

#[derive(Table)]
#[table(name = "shop", vector(name = "by_look", attr = "sk", dims = 3, metric = cosine))]
struct Shop;

fn main() {}
