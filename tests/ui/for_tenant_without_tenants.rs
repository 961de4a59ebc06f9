use ddb_model::{Db, Table};

#[derive(Table)]
#[table(name = "saas")]
struct Saas;

fn scoped(db: Db<Saas>) -> Db<Saas> {
    db.for_tenant("acme")
}

fn main() {}
