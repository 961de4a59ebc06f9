use ddb_model::Table;

#[derive(Table)]
#[table(name = "shop", gsi(name = "by_stock", pk = ["stock": N]), vector(name = "by_look", attr = "look", dims = 3, metric = cosine, filters = ["stock": S]))]
struct Shop;

fn main() {}
