//! The values batch errors carry ([`Error::BatchGetIncomplete`](super::Error::BatchGetIncomplete),
//! [`Error::BatchWriteIncomplete`](super::Error::BatchWriteIncomplete)): [`BatchKey`],
//! [`BatchAction`], [`UnprocessedWrite`]. Public as `ddb_model::error::{...}` and
//! `ddb_model::ops::{...}`; `BatchKey`'s typed accessors are in `ops::batch`.

use std::fmt;

/// The key of an item named in a batch, with the entity type it was requested as. Carried by
/// [`Error::BatchGetIncomplete`](super::Error::BatchGetIncomplete) and [`Error::BatchWriteIncomplete`](super::Error::BatchWriteIncomplete).
///
/// ```
/// use ddb_model::{Entity, error::BatchKey};
/// # use serde::{Deserialize, Serialize};
/// # #[derive(Entity, Serialize, Deserialize)]
/// # #[entity(pk = "USER#<id>", sk = "PROFILE")]
/// # struct User { id: String }
///
/// fn retry_later(unprocessed: &[BatchKey]) -> Vec<ddb_model::Key<User>> {
///     // Back to typed keys, for another attempt.
///     unprocessed.iter().filter_map(BatchKey::key::<User>).collect()
/// }
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct BatchKey {
    /// The entity type the key was given as.
    pub entity: &'static str,
    /// The encoded partition key.
    pub pk: String,
    /// The encoded sort key, if the table has one.
    pub sk: Option<String>,
}

impl fmt::Display for BatchKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}` ", self.entity)?;
        super::display_key(f, &self.pk, self.sk.as_deref())
    }
}

/// What one write of a batch does (example on [`UnprocessedWrite`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BatchAction {
    /// Stores a whole item, overwriting whatever is stored under its key.
    Put,
    /// Deletes the item under the key, whatever it is.
    Delete,
}

/// A write of a batch that is not known to have been applied, in
/// [`Error::BatchWriteIncomplete`](super::Error::BatchWriteIncomplete).
///
/// ```
/// use ddb_model::{Error, error::BatchAction};
///
/// fn not_applied(err: &Error) -> Vec<String> {
///     match err {
///         Error::BatchWriteIncomplete { unprocessed, .. } => unprocessed
///             .iter()
///             .filter(|w| w.action == BatchAction::Put)
///             .map(|w| w.key.to_string())
///             .collect(),
///         _ => Vec::new(),
///     }
/// }
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct UnprocessedWrite {
    /// Put or delete.
    pub action: BatchAction,
    /// The item's key.
    pub key: BatchKey,
}

impl fmt::Display for UnprocessedWrite {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let action = match self.action {
            BatchAction::Put => "put",
            BatchAction::Delete => "delete",
        };
        write!(f, "{action} {}", self.key)
    }
}
