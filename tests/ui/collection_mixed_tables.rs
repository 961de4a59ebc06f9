use ddb_model::{Collection, Entity, Table};
use serde::{Deserialize, Serialize};

#[derive(Table)]
#[table(name = "other", pk = "pk", sk = "sk")]
struct Other;

#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "USER#<id>", sk = "PROFILE")]
struct User {
    id: String,
}

#[derive(Entity, Serialize, Deserialize)]
#[entity(table = Other, pk = "LOG#<id>", sk = "LOG")]
struct Log {
    id: String,
}

#[derive(Collection)]
enum Items {
    User(User),
    Log(Log),
}

fn main() {}
