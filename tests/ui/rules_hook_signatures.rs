use ddb_model::Entity;
use serde::{Deserialize, Serialize};

/// The validation takes `&Self`: it cannot change the value.
#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "USER#<id>", sk = "PROFILE", validate = fill_in)]
struct User {
    id: String,
}

fn fill_in(user: &mut User) -> Result<(), std::fmt::Error> {
    user.id.push('!');
    Ok(())
}

/// The validation's error is a `std::error::Error`.
#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "ORDER#<id>", sk = "ORDER", validate = says_why)]
struct Order {
    id: String,
}

fn says_why(_: &Order) -> Result<(), String> {
    Err("no".into())
}

/// The transformation after read takes `&mut Self` and returns nothing.
#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "NOTE#<id>", sk = "NOTE", after_read = checks)]
struct Note {
    id: String,
}

fn checks(_: &Note) -> bool {
    true
}

fn main() {}
