use ddb_model::Table;

#[derive(Table)]
#[table(name = "shop", gsi(name = "by_look", pk = "gsi1pk"), vector(name = "by_look", attr = "look", dims = 3, metric = cosine))]
struct Shop;

fn main() {}
