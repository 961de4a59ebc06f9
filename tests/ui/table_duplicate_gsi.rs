use ddb_model::Table;

#[derive(Table)]
#[table(
    name = "app",
    gsi(name = "gsi1", pk = "gsi1pk", sk = "gsi1sk"),
    gsi(name = "gsi1", pk = "gsi2pk")
)]
struct App;

fn main() {}
