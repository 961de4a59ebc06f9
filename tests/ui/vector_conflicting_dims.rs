use ddb_model::Table;

#[derive(Table)]
#[table(name = "shop", vector(name = "by_look", attr = "look", dims = 3, metric = cosine), vector(name = "by_look_dot", attr = "look", dims = 4, metric = dot_product))]
struct Shop;

fn main() {}
