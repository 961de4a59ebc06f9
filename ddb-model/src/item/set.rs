//! Set fields stored as DynamoDB sets: `#[serde(default, with = "ddb_model::set")]`.
//!
//! serde writes a `HashSet` or `BTreeSet` as a sequence, which DynamoDB stores as a list
//! (`L`). A field marked `#[serde(default, with = "ddb_model::set")]` is stored as a string,
//! number or binary set instead (`SS`, `NS`, `BS`, chosen by what its elements serialize as:
//! strings, numbers, or bytes such as `serde_bytes::ByteBuf`), so that typed updates can add
//! and delete elements ([`UpdateVerbs::add_to_set`](crate::UpdateVerbs::add_to_set),
//! [`delete_from_set`](crate::UpdateVerbs::delete_from_set)).
//!
//! DynamoDB has no empty set: an empty set field is written as no attribute at all, which is
//! also what DynamoDB leaves when a `DELETE` removes the last element. `default` makes an
//! absent attribute read back as an empty set, so it is required (without it serde reports a
//! missing field). A stored `NULL` also reads as an empty set, a stored list as its elements.
//!
//! To replace the whole set in an update, use
//! [`replace_set`](crate::UpdateVerbs::replace_set): `set(Post::TAGS, tags)` compiles (the
//! path's type is the set type) but writes the value as serde gives it, a list, after which
//! `add_to_set` and `delete_from_set` on that item fail at the service.
//!
//! ```
//! use std::collections::BTreeSet;
//! use ddb_model::prelude::*;
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
//! #[entity(pk = "POST#<id>", sk = "POST")]
//! struct Post {
//!     id: String,
//!     #[serde(default, with = "ddb_model::set")]
//!     tags: BTreeSet<String>,
//! }
//!
//! # async fn demo(db: &Db<DefaultTable>) -> Result<(), Error> {
//! Post { id: "p".into(), tags: BTreeSet::new() }.create(db).await?; // no `tags` attribute
//! let post = Post::update(db, "p").add_to_set(Post::TAGS, ["rust", "aws"]).await?;
//! assert_eq!(post.tags, BTreeSet::from(["aws".to_string(), "rust".to_string()]));
//! let post = Post::update(db, "p").delete_from_set(Post::TAGS, ["rust", "aws"]).await?;
//! assert!(post.tags.is_empty()); // the attribute is gone; `default` reads it as empty
//! # Ok(())
//! # }
//! # use ddb_model::DefaultTable;
//! # #[cfg(feature = "local")]
//! # #[tokio::main]
//! # async fn main() -> Result<(), Error> {
//! #     demo(&ddb_model::local::isolated_db::<DefaultTable>().await?).await
//! # }
//! # #[cfg(not(feature = "local"))]
//! # fn main() {}
//! ```

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The newtype name the item serializer recognises (see `item::ser`): the elements decide
/// the set type, and an empty set is left out of the item.
pub(crate) const AUTO_SET: &str = "\u{037E}DDBM_SET\u{037E}";

/// Serializes a set (any `Serialize` value whose elements are strings, numbers or bytes) as
/// a DynamoDB set. Other serializers see the set as it is.
pub fn serialize<T: Serialize + ?Sized, S: Serializer>(
    value: &T,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serializer.serialize_newtype_struct(AUTO_SET, value)
}

/// Reads a DynamoDB set (or a list) into the set type; `NULL` reads as an empty set.
pub fn deserialize<'de, T: Deserialize<'de> + Default, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<T, D::Error> {
    Ok(Option::<T>::deserialize(deserializer)?.unwrap_or_default())
}
