use ddb_model::Table;

#[derive(Table)]
#[table(name = "shop", vector(name = "by_look", attr = "look", dims = 3, metric = cosine, shards = 2))]
struct Shop;

fn main() {}
