use ddb_model::Entity;
use serde::{Deserialize, Serialize};

// Options that do not parse, or do not go together.
#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "A#<a:padded>#<b:iso8601>", sk = "<c:lower:upper>#<d:unpadded:lower>#<e:unpadded:iso8601(ms)>")]
#[index(gsi1, pk = "<e:iso8601(ms)>:<a>", sk = "<b:lower:lower>")]
struct Row {
    a: String,
    b: String,
    c: String,
    d: u32,
    e: u32,
}

fn main() {}
