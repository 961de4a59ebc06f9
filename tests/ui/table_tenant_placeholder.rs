use ddb_model::Table;

#[derive(Table)]
#[table(name = "saas", tenant = "ORG#<org>")]
struct Saas;

fn main() {}
