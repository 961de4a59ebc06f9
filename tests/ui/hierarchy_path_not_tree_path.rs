use ddb_model::Entity;
use serde::{Deserialize, Serialize};

#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "DRIVE#<drive>", sk = "NODE#<path>")]
#[hierarchy(path = path, index = gsi1)]
struct Folder {
    drive: String,
    path: String,
}

fn main() {}
