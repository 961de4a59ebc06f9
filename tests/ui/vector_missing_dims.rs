use ddb_model::Table;

#[derive(Table)]
#[table(name = "shop", vector(name = "by_look", attr = "look", metric = cosine))]
struct Shop;

fn main() {}
