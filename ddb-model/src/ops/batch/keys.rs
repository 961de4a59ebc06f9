//! Item identities in a batch: raw keys, and the typed accessors of [`BatchKey`].

use std::fmt;

use aws_sdk_dynamodb::types::AttributeValue;

use crate::error::BatchKey;
use crate::item::Item;
use crate::key::{Key, display_key};
use crate::model::{Entity, Table};

/// The identity of a stored item: its partition and sort key strings.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) struct RawKey {
    pub(super) pk: String,
    pub(super) sk: Option<String>,
}

impl RawKey {
    pub(super) fn of<E>(key: &Key<E>) -> RawKey {
        RawKey { pk: key.pk().to_owned(), sk: key.sk().map(str::to_owned) }
    }

    /// The key attributes of `item` (a stored item or a key), if they are strings.
    pub(super) fn from_item<T: Table>(item: &Item) -> Option<RawKey> {
        let string = |attr: &str| match item.get(attr) {
            Some(AttributeValue::S(s)) => Some(s.clone()),
            _ => None,
        };
        let pk = string(T::PK)?;
        let sk = match T::SK {
            Some(attr) => Some(string(attr)?),
            None => None,
        };
        Some(RawKey { pk, sk })
    }

    pub(super) fn batch_key(&self, entity: &'static str) -> BatchKey {
        BatchKey { entity, pk: self.pk.clone(), sk: self.sk.clone() }
    }
}

// `BatchKey`, `BatchAction` and `UnprocessedWrite` are defined beside the errors that carry
// them (`error::batch`); the typed accessors, which need `Entity`, are here.
impl BatchKey {
    /// The typed key, when this key was given as an `E` (`None` for another entity type).
    ///
    /// ```
    /// # use ddb_model::{Entity, error::BatchKey};
    /// # use serde::{Deserialize, Serialize};
    /// # #[derive(Entity, Serialize, Deserialize)]
    /// # #[entity(pk = "USER#<id>", sk = "PROFILE")]
    /// # struct User { id: String }
    /// fn users(keys: &[BatchKey]) -> Vec<ddb_model::Key<User>> {
    ///     keys.iter().filter_map(|k| k.key::<User>()).collect()
    /// }
    /// ```
    pub fn key<E: Entity>(&self) -> Option<Key<E>> {
        (self.entity == E::NAME).then(|| Key::from_parts(self.pk.clone(), self.sk.clone()))
    }

    /// True when this is the key `key` of an `E`.
    ///
    /// ```
    /// # use ddb_model::{Entity, error::BatchKey};
    /// # use serde::{Deserialize, Serialize};
    /// # #[derive(Entity, Serialize, Deserialize)]
    /// # #[entity(pk = "USER#<id>", sk = "PROFILE")]
    /// # struct User { id: String }
    /// fn was_left_out(unprocessed: &[BatchKey], id: &str) -> bool {
    ///     unprocessed.iter().any(|k| k.is(&User::key(id)))
    /// }
    /// ```
    pub fn is<E: Entity>(&self, key: &Key<E>) -> bool {
        self.entity == E::NAME && self.pk == key.pk() && self.sk.as_deref() == key.sk()
    }
}

pub(super) struct DisplayRaw<'k>(pub(super) &'k RawKey);

impl fmt::Display for DisplayRaw<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        display_key(f, &self.0.pk, self.0.sk.as_deref())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_keys_are_read_from_string_attributes() {
        use crate::model::DefaultTable;
        let mut item = Item::new();
        item.insert("pk".into(), AttributeValue::S("A".into()));
        assert_eq!(RawKey::from_item::<DefaultTable>(&item), None, "the sort key is missing");
        item.insert("sk".into(), AttributeValue::S("B".into()));
        assert_eq!(
            RawKey::from_item::<DefaultTable>(&item),
            Some(RawKey { pk: "A".into(), sk: Some("B".into()) })
        );
        item.insert("pk".into(), AttributeValue::N("1".into()));
        assert_eq!(RawKey::from_item::<DefaultTable>(&item), None);
    }
}
