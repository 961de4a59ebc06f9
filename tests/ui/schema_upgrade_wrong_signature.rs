use ddb_model::{Entity, Item};
use serde::{Deserialize, Serialize};

// The version comes first, and the error type is `ddb_model::error::UpgradeError`.
fn upgrade_user(_item: &mut Item, _from: u32) -> Result<(), String> {
    Ok(())
}

#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "USER#<id>", sk = "PROFILE", schema = 2, upgrade = upgrade_user)]
struct User {
    id: String,
}

fn main() {}
