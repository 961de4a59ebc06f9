use ddb_model::Table;

#[derive(Table)]
#[table(name = "shop", vector(name = "vix0", attr = "v0", dims = 3, metric = cosine), vector(name = "vix1", attr = "v1", dims = 3, metric = cosine), vector(name = "vix2", attr = "v2", dims = 3, metric = cosine), vector(name = "vix3", attr = "v3", dims = 3, metric = cosine), vector(name = "vix4", attr = "v4", dims = 3, metric = cosine), vector(name = "vix5", attr = "v5", dims = 3, metric = cosine))]
struct Shop;

fn main() {}
