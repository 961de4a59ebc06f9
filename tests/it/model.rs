//! The models the tests share.

use std::collections::BTreeMap;

use ddb_model::{Collection, Entity, Item, KeyPart, Table};
use serde::{Deserialize, Serialize};

/// A custom table with two indexes, one without a sort key.
#[derive(Table)]
#[table(
    name = "app",
    pk = "pk",
    sk = "sk",
    gsi(name = "gsi1", pk = "gsi1pk", sk = "gsi1sk"),
    gsi(name = "gsi2", pk = "gsi2pk")
)]
pub struct App;

/// Users: by id; by organisation and name on gsi1; by e-mail on gsi2 (sparse: users without an
/// e-mail are not in gsi2).
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = App, pk = "USER#<id>", sk = "PROFILE")]
#[index(gsi1, pk = "ORG#<org>", sk = "USER#<name>#<id>")]
#[index(gsi2, pk = "EMAIL#<email>")]
pub struct User {
    pub id: String,
    pub org: String,
    pub name: String,
    pub email: Option<String>,
    #[serde(default)]
    pub logins: u64,
    #[serde(default)]
    pub tags: Vec<String>,
    pub nick: Option<String>,
    #[serde(default)]
    pub address: BTreeMap<String, String>,
}

impl User {
    pub fn sample(id: &str) -> User {
        User {
            id: id.into(),
            org: "acme".into(),
            name: format!("name-{id}"),
            email: Some(format!("{id}@acme.test")),
            logins: 0,
            tags: vec![],
            nick: None,
            address: BTreeMap::new(),
        }
    }
}

#[derive(KeyPart, Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Status {
    Open,
    #[key_part(rename = "SHIPPED")]
    Shipped,
}

/// Orders of a user, numbered per year; versioned.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = App, pk = "USER#<user>", sk = "ORDER#<year>#<seq>", version = version)]
pub struct Order {
    pub user: String,
    pub year: i32,
    pub seq: u64,
    pub status: Status,
    pub total_cents: i64,
    pub version: u64,
}

/// Store locations under a country, at any level of state / city / zip (seed 003).
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(pk = "<country>", sk = "<state>#<city>#<zip>")]
pub struct Store {
    pub country: String,
    pub state: String,
    pub city: String,
    pub zip: String,
    pub address: String,
    pub square_feet: u32,
}

#[derive(KeyPart, Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct DocId(pub String);

/// serde attributes: container rename, field rename, skip, default; strict about unknown
/// fields (so key and type attributes must not reach it).
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[entity(pk = "DOC#<doc_id>", sk = "REV#<revision>", name = "Document")]
pub struct Doc {
    pub doc_id: DocId,
    pub revision: u16,
    #[serde(rename = "heading")]
    pub title_text: String,
    #[serde(skip)]
    pub cached_render: Option<String>,
    #[serde(default)]
    pub word_count: u32,
}

/// A singleton: no placeholders at all.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(pk = "CONFIG", sk = "GLOBAL")]
pub struct Config {
    pub maintenance: bool,
    pub motd: String,
}

/// A table without a sort key.
#[derive(Table)]
#[table(name = "kv", pk = "id", no_sort_key, type_attr = "kind")]
pub struct Kv;

#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = Kv, pk = "SESSION#<token>")]
pub struct Session {
    pub token: String,
    pub user: String,
}

/// A counter for retry / idempotency tests.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(pk = "COUNTER#<name>", sk = "COUNTER")]
pub struct Counter {
    pub name: String,
    pub n: i64,
    #[serde(default)]
    pub log: Vec<String>,
}

/// Keys made of the feature-gated types.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(pk = "EVENT#<stream>", sk = "<at>#<id>")]
pub struct Event {
    pub stream: uuid::Uuid,
    pub at: chrono::DateTime<chrono::Utc>,
    pub id: i64,
    pub day: chrono::NaiveDate,
}

/// A user's partition read as one collection: the profile and the orders.
#[derive(Collection, Debug, Clone, PartialEq)]
pub enum UserItems {
    User(User),
    Order(Order),
}

/// The same, tolerating entity types it does not list.
#[derive(Collection, Debug, Clone, PartialEq)]
pub enum UserItemsOrOther {
    User(User),
    Order(Order),
    #[collection(other)]
    Other(Item),
}

/// A folder of a drive: one tree per drive, children and depths on gsi1.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(pk = "DRIVE#<drive>", sk = "NODE#<path>")]
#[hierarchy(path = path, index = gsi1)]
pub struct Folder {
    pub drive: String,
    pub path: ddb_model::TreePath,
}

impl Folder {
    pub fn at(drive: &str, path: &str) -> Folder {
        Folder { drive: drive.into(), path: path.parse().expect("a valid path") }
    }
}

/// The category tree of seed 000: one tree in the table (no placeholder in the partition
/// key), the path alone as the sort key, at most 6 levels; versioned.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = App, pk = "CATEGORIES", sk = "<path>", version = version)]
#[hierarchy(path = path, index = gsi1, max_depth = 6)]
pub struct Category {
    pub path: ddb_model::TreePath,
    pub name: String,
    #[serde(default)]
    pub version: u64,
}

/// A folder of seed 002's replication pattern: addressed by its id, one copy per ancestor
/// with the relative depth (closure strategy).
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(pk = "DRIVES#<owner>", sk = "DIR#<id>")]
#[hierarchy(strategy = closure, parent = parent)]
pub struct Dir {
    pub owner: String,
    pub id: String,
    pub parent: Option<String>,
    pub name: String,
}

impl Dir {
    pub fn new(owner: &str, id: &str, parent: Option<&str>) -> Dir {
        Dir {
            owner: owner.into(),
            id: id.into(),
            parent: parent.map(Into::into),
            name: format!("Folder {id}"),
        }
    }
}

/// Staff of an organisation in the custom table, versioned, with a user index (copies must
/// stay out of it): closure strategy, at most 8 levels.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = App, pk = "ORG#<org>", sk = "EMP#<id>", version = version)]
#[index(gsi1, pk = "TITLE#<title>", sk = "EMP#<id>")]
#[hierarchy(strategy = closure, parent = manager, max_depth = 8)]
pub struct Staff {
    pub org: String,
    pub id: String,
    pub manager: Option<String>,
    pub title: String,
    #[serde(default)]
    pub version: u64,
}

/// A product category of seed 001's adjacency list: it names its parent; an index on the
/// parent finds the children.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(pk = "CATALOG#<catalog>", sk = "CAT#<id>")]
#[hierarchy(strategy = adjacency, parent = parent, index = gsi2)]
pub struct Cat {
    pub catalog: String,
    pub id: String,
    pub parent: Option<String>,
    pub name: String,
}

impl Cat {
    pub fn new(catalog: &str, id: &str, parent: Option<&str>) -> Cat {
        Cat {
            catalog: catalog.into(),
            id: id.into(),
            parent: parent.map(Into::into),
            name: id.to_uppercase(),
        }
    }
}

/// A product category of seed 001's nested-set model: an interval of numbers nested in its
/// parent's, and an index on the interval's start (a subtree is one range query).
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(pk = "CATALOG#<catalog>", sk = "NEST#<id>")]
#[hierarchy(strategy = nested_set, parent = parent, index = gsi3)]
pub struct Nest {
    pub catalog: String,
    pub id: String,
    pub parent: Option<String>,
    pub name: String,
}

impl Nest {
    pub fn new(catalog: &str, id: &str, parent: Option<&str>) -> Nest {
        Nest {
            catalog: catalog.into(),
            id: id.into(),
            parent: parent.map(Into::into),
            name: id.to_uppercase(),
        }
    }
}
