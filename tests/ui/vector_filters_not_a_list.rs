use ddb_model::Table;

#[derive(Table)]
#[table(name = "shop", vector(name = "by_look", attr = "look", dims = 3, metric = cosine, filters = "brand"))]
struct Shop;

fn main() {}
