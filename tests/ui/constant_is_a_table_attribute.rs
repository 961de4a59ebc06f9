use ddb_model::Entity;
use serde::{Deserialize, Serialize};

fn upgrade(_from: u32, _item: &mut ddb_model::Item) -> Result<(), ddb_model::error::UpgradeError> {
    Ok(())
}

// Every one of these attributes is written by the table itself.
#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "USER#<id>", sk = "PROFILE", schema = 2, upgrade = upgrade)]
#[entity(constant(pk = "1", sk = "2", _type = "3", gsi1pk = "4", "_schema" = "5"))]
struct User {
    id: String,
}

fn main() {}
