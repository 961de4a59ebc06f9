use ddb_model::{Entity, Item, error::UpgradeError};
use serde::{Deserialize, Serialize};

fn upgrade_user(_from: u32, _item: &mut Item) -> Result<(), UpgradeError> {
    Ok(())
}

#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "USER#<id>", sk = "PROFILE", schema = 1, upgrade = upgrade_user)]
struct User {
    id: String,
}

fn main() {}
