use ddb_model::Table;

#[derive(Table)]
#[table(name = "app", none_as_null = "yes")]
struct App;

#[derive(Table)]
#[table(name = "other", none_as_null, none_as_null)]
struct Other;

fn main() {}
