use ddb_model::Table;

#[derive(Table)]
#[table(name = "shop", vector(name = "by_look", attr = "look", dims = 3, metric = cosine), vector(name = "by_look", attr = "feel", dims = 3, metric = euclidean))]
struct Shop;

fn main() {}
