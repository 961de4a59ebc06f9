//! Typed DynamoDB Streams records: each change of an item as the entity it was before and
//! after, read with the same [`Collection`] enum a query of an item collection uses.
//!
//! A record arrives in one of two shapes, both turned into a [`StreamRecord`] first:
//!
//! - the **Lambda event** (`{"Records": [{"eventName": "INSERT", "dynamodb": {..}}]}`, the
//!   attribute values in DynamoDB JSON): [`StreamEvent`] and [`StreamRecord`] implement serde's
//!   `Deserialize` (and `Serialize`), so `serde_json::from_str::<StreamEvent>` or a Lambda
//!   runtime's typed event reads it; no JSON crate is needed by this one;
//! - the **streams API** (`GetRecords` of `aws-sdk-dynamodbstreams`): feature `streams-sdk`
//!   converts its `Record` (`StreamRecord::try_from`).
//!
//! [`StreamRecord::decode`] then reads the old and new images as `C`, the user's
//! `#[derive(Collection)]` enum, exactly as a query of the collection reads items: by the
//! entity-type attribute (or the keys, for entities told apart by their keys), the keys and
//! the library's bookkeeping attributes removed, the fields through serde. An image that is
//! not one of `C`'s entities never fails the record: it is an [`Image::Unknown`] that says
//! why ([`Unknown`]): another program's item or a type `C` does not list, one of the
//! library's own bookkeeping items (a tree's intent record, an edge removal's progress), or
//! an item of a listed type that does not decode (the error kept).
//!
//! Each of the stream view types works: `KEYS_ONLY` has no image (both `None`, the keys
//! in [`Change::keys`]), `NEW_IMAGE` has only the new one, `OLD_IMAGE` only the old one,
//! `NEW_AND_OLD_IMAGES` both where the event has them (an `INSERT` has no old image, a
//! `REMOVE` no new one).
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use ddb_model::stream::{EventKind, Image, StreamEvent, StreamRecord, ViewType};
//! use ddb_model::{Collection, Entity};
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Entity, Serialize, Deserialize, Debug)]
//! #[entity(pk = "USER#<id>", sk = "PROFILE")]
//! struct User { id: String, name: String }
//!
//! #[derive(Collection, Debug)]
//! enum Changed { User(User) }
//!
//! // What a Lambda function subscribed to the table's stream receives.
//! let event: StreamEvent = serde_json::from_str(r#"{"Records": [{
//!     "eventID": "1", "eventName": "INSERT", "eventSource": "aws:dynamodb",
//!     "dynamodb": {
//!         "Keys": {"pk": {"S": "USER#ann"}, "sk": {"S": "PROFILE"}},
//!         "NewImage": {"pk": {"S": "USER#ann"}, "sk": {"S": "PROFILE"},
//!                      "_type": {"S": "User"}, "id": {"S": "ann"}, "name": {"S": "Ann"}},
//!         "SequenceNumber": "100", "StreamViewType": "NEW_AND_OLD_IMAGES"
//!     }
//! }]}"#)?;
//! let changes = event.decode::<Changed>();
//! let change = changes[0].as_ref().map_err(|e| e.to_string())?;
//! assert_eq!(change.kind, EventKind::Insert);
//! assert!(matches!(&change.new, Some(Image::Entity(Changed::User(u))) if u.name == "Ann"));
//! assert!(change.old.is_none());
//! assert_eq!(change.entity_type(), Some("User"));
//!
//! // The names the service writes; a record no stream writes is an error.
//! assert_eq!(EventKind::parse("MODIFY"), Some(EventKind::Modify));
//! assert_eq!(EventKind::parse("modify"), None);
//! assert_eq!(EventKind::Remove.as_str(), "REMOVE");
//! assert_eq!(ViewType::parse("KEYS_ONLY"), Some(ViewType::KeysOnly));
//! assert_eq!(ViewType::NewImage.as_str(), "NEW_IMAGE");
//! let empty: StreamEvent = serde_json::from_str(r#"{"Records": []}"#)?;
//! assert!(empty.records.is_empty());
//! let bad = StreamRecord { event_name: "UPSERT".into(), ..Default::default() };
//! assert!(bad.decode::<Changed>().is_err_and(|e| e.is_invalid_stream_record()));
//! # Ok(()) }
//! ```

pub mod aggregate;
mod json;
#[cfg(feature = "streams-sdk")]
mod sdk;

use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};

use crate::db::{Db, Sealer};
use crate::error::{Error, StreamRecordReason};
use crate::item::Item;
use crate::model::{Table, key_display, string_attr, strip_markers};
use crate::ops::Collection;

/// `parse` and `as_str` of an enum whose variants the service writes as one name each.
macro_rules! service_names {
    ($ty:ident { $($variant:ident = $name:literal),* $(,)? }) => {
        impl $ty {
            /// The value the service names `name`, `None` for another text.
            pub fn parse(name: &str) -> Option<$ty> {
                match name {
                    $($name => Some($ty::$variant),)*
                    _ => None,
                }
            }

            /// The name the service writes.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($ty::$variant => $name,)*
                }
            }
        }
    };
}

/// What happened to the item: the record's `eventName` (example in the
/// [module documentation](crate::stream)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EventKind {
    /// `INSERT`: the item was written where there was none (new image only).
    Insert,
    /// `MODIFY`: an existing item was written (old and new images).
    Modify,
    /// `REMOVE`: the item was deleted, by a write or by TTL (old image only).
    Remove,
}

service_names!(EventKind { Insert = "INSERT", Modify = "MODIFY", Remove = "REMOVE" });

/// What the stream keeps of each changed item: the record's `StreamViewType` (example in the
/// [module documentation](crate::stream)); the same type sets a table's stream
/// ([`TableOptions::stream`](crate::ops::TableOptions::stream)).
pub use crate::ops::ViewType;

/// A Lambda event of DynamoDB Streams records: `{"Records": [..]}` (example in the
/// [module documentation](crate::stream)).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StreamEvent {
    /// The records, in stream order within each shard.
    #[serde(rename = "Records", default)]
    pub records: Vec<StreamRecord>,
}

impl StreamEvent {
    /// Decodes every record as changes of `C`'s entities ([`StreamRecord::decode`]), in
    /// order; a record that is not a valid stream record is an error in its place, and the
    /// others are decoded all the same.
    pub fn decode<C: Collection>(&self) -> Vec<Result<Change<C>, Error>> {
        self.records.iter().map(StreamRecord::decode).collect()
    }

    /// [`decode`](StreamEvent::decode) with `db`'s keyring ([`StreamRecord::decode_in`]).
    pub fn decode_in<C: Collection>(&self, db: &Db<C::Table>) -> Vec<Result<Change<C>, Error>> {
        self.records.iter().map(|r| r.decode_in(db)).collect()
    }
}

/// One stream record as it arrives, in the Lambda event's shape (field names as the service
/// writes them); made by deserializing a Lambda event, or from a record of the streams API
/// (feature `streams-sdk`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct StreamRecord {
    /// A unique id of the record (`eventID`).
    #[serde(rename = "eventID", skip_serializing_if = "Option::is_none")]
    pub event_id: Option<String>,
    /// `INSERT`, `MODIFY` or `REMOVE` (`eventName`); kept as text, checked by `decode`.
    pub event_name: String,
    /// `aws:dynamodb` (`eventSource`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub event_source: Option<String>,
    /// The stream's ARN (`eventSourceARN`; Lambda events only).
    #[serde(rename = "eventSourceARN", skip_serializing_if = "Option::is_none")]
    pub event_source_arn: Option<String>,
    /// The region (`awsRegion`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub aws_region: Option<String>,
    /// Who made the change, when it was not a user: DynamoDB itself for a TTL deletion.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user_identity: Option<UserIdentity>,
    /// The change itself (`dynamodb`).
    pub dynamodb: StreamChange,
}

/// Who made a change, when the service did (`userIdentity`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct UserIdentity {
    /// `Service` for a deletion by TTL.
    #[serde(rename = "type")]
    pub kind: String,
    /// `dynamodb.amazonaws.com` for a deletion by TTL.
    pub principal_id: String,
}

/// The change a record carries: keys, images and stream position (the record's `dynamodb`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct StreamChange {
    /// The item's key attributes (`Keys`).
    #[serde(with = "json::item")]
    pub keys: Item,
    /// The item after the change (`NewImage`), if the view type keeps it.
    #[serde(skip_serializing_if = "Option::is_none", with = "json::opt_item")]
    pub new_image: Option<Item>,
    /// The item before the change (`OldImage`), if the view type keeps it.
    #[serde(skip_serializing_if = "Option::is_none", with = "json::opt_item")]
    pub old_image: Option<Item>,
    /// The record's position in its shard (`SequenceNumber`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sequence_number: Option<String>,
    /// The size of the record in bytes (`SizeBytes`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size_bytes: Option<u64>,
    /// `KEYS_ONLY`, `NEW_IMAGE`, `OLD_IMAGE` or `NEW_AND_OLD_IMAGES` (`StreamViewType`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stream_view_type: Option<String>,
    /// When the change was made, in seconds since the epoch, to the second or finer
    /// (`ApproximateCreationDateTime`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub approximate_creation_date_time: Option<f64>,
}

impl StreamRecord {
    /// Reads the record as a change of `C`'s entities. Never fails because of an image: an
    /// image that is not one of `C`'s entities is [`Image::Unknown`]. Fails only on a record
    /// that no stream writes: an event name other than `INSERT`, `MODIFY` and `REMOVE`, or a
    /// view type the service does not have ([`Error::InvalidStreamRecord`]). Example in the
    /// [module documentation](crate::stream).
    ///
    /// The images of an entity with `#[encrypt]` or `#[sign_only]` fields are
    /// [`Image::Unknown`] here (`Corrupt`, with [`EncryptionProblem::NotConfigured`]):
    /// read them with [`decode_in`](StreamRecord::decode_in).
    ///
    /// [`EncryptionProblem::NotConfigured`]: crate::error::EncryptionProblem::NotConfigured
    pub fn decode<C: Collection>(&self) -> Result<Change<C>, Error> {
        self.decode_with(&Sealer::NONE)
    }

    /// [`decode`](StreamRecord::decode), the images of sealed entities (`#[encrypt]`,
    /// `#[sign_only]`) verified and decrypted with `db`'s keyring as a read through `db`
    /// would: a tampered or unsigned image is [`Image::Unknown`] (`Corrupt`, with the
    /// [`Error::Encryption`] a read would return).
    pub fn decode_in<C: Collection>(&self, db: &Db<C::Table>) -> Result<Change<C>, Error> {
        self.decode_with(db.sealer_ref())
    }

    fn decode_with<C: Collection>(&self, sealer: &Sealer) -> Result<Change<C>, Error> {
        let invalid =
            |reason| Error::InvalidStreamRecord { event_id: self.event_id.clone(), reason };
        let name = || self.event_name.clone();
        let kind = EventKind::parse(&self.event_name)
            .ok_or_else(|| invalid(StreamRecordReason::UnknownEventName { name: name() }))?;
        let change = &self.dynamodb;
        let view = match &change.stream_view_type {
            None => None,
            Some(name) => Some(ViewType::parse(name).ok_or_else(|| {
                invalid(StreamRecordReason::UnknownViewType { name: name.clone() })
            })?),
        };
        let created_at = change.approximate_creation_date_time.and_then(|secs| {
            Duration::try_from_secs_f64(secs)
                .ok()
                .and_then(|d| SystemTime::UNIX_EPOCH.checked_add(d))
        });
        let removed_by_ttl = kind == EventKind::Remove
            && self
                .user_identity
                .as_ref()
                .is_some_and(|u| u.kind == "Service" && u.principal_id == "dynamodb.amazonaws.com");
        Ok(Change {
            kind,
            keys: change.keys.clone(),
            old: change.old_image.as_ref().map(|item| Image::read(item, sealer)),
            new: change.new_image.as_ref().map(|item| Image::read(item, sealer)),
            old_item: change.old_image.clone(),
            new_item: change.new_image.clone(),
            view,
            sequence_number: change.sequence_number.clone(),
            event_id: self.event_id.clone(),
            source_arn: self.event_source_arn.clone(),
            created_at,
            removed_by_ttl,
        })
    }
}

/// One change of an item, its images read as `C` (see [`StreamRecord::decode`]).
#[derive(Debug)]
#[non_exhaustive]
pub struct Change<C> {
    /// Insert, modify or remove.
    pub kind: EventKind,
    /// The item's key attributes, in every view type.
    pub keys: Item,
    /// The item before the change: `None` for an insert and when the view type does not
    /// keep old images.
    pub old: Option<Image<C>>,
    /// The item after the change: `None` for a remove and when the view type does not keep
    /// new images.
    pub new: Option<Image<C>>,
    /// The old image as stored (what [`old`](Change::old) was read from).
    pub old_item: Option<Item>,
    /// The new image as stored (what [`new`](Change::new) was read from).
    pub new_item: Option<Item>,
    /// The stream's view type, when the record names it.
    pub view: Option<ViewType>,
    /// The record's position in its shard (checkpoint after it).
    pub sequence_number: Option<String>,
    /// The record's unique id.
    pub event_id: Option<String>,
    /// The stream's ARN, when the record names it (Lambda events).
    pub source_arn: Option<String>,
    /// When the change was made (approximately), when the record says.
    pub created_at: Option<SystemTime>,
    /// True for a `REMOVE` made by DynamoDB's time to live rather than by a request.
    pub removed_by_ttl: bool,
}

impl<C: Collection> Change<C> {
    /// The entity type of the changed item, as `C` names it. Read from an image when the
    /// record has one (the new one first; a corrupt image of a listed type counts); `None`
    /// for an image of no entity of `C`. Without an image (`KEYS_ONLY`), from the keys: the
    /// first variant of `C` whose key templates read them (two entities whose templates can
    /// produce the same key cannot be told apart by it).
    pub fn entity_type(&self) -> Option<&'static str> {
        let position = match (&self.new_item, &self.old_item) {
            (None, None) => C::variant_of(&self.keys).or_else(|| C::variant_of_key(&self.keys)),
            (new, old) => [new, old].into_iter().flatten().find_map(|item| C::variant_of(item)),
        };
        position.and_then(|i| C::TYPES.get(i).copied())
    }

    /// The changed item's key, for display.
    pub fn key_display(&self) -> String {
        let text = |attr: &str| string_attr(&self.keys, attr);
        key_display(text(<C::Table as Table>::PK), <C::Table as Table>::SK.and_then(text))
    }
}

impl<C> Change<C> {
    /// The entity after the change, if the new image is one of `C`'s entities.
    pub fn new_entity(&self) -> Option<&C> {
        self.new.as_ref().and_then(Image::entity)
    }

    /// The entity before the change, if the old image is one of `C`'s entities.
    pub fn old_entity(&self) -> Option<&C> {
        self.old.as_ref().and_then(Image::entity)
    }

    /// The entity the change is about: the new one, else the old one (a removed entity).
    pub fn entity(&self) -> Option<&C> {
        self.new_entity().or_else(|| self.old_entity())
    }

    /// True for a `MODIFY` that changed none of the item's data: the two images differ only
    /// in the markers a returning update writes for a moment and removes with a second
    /// request (see [`Update`](crate::ops::Update)). A consumer may skip it. False when an
    /// image is missing.
    pub fn is_bookkeeping_only(&self) -> bool {
        match (&self.old_item, &self.new_item) {
            (Some(old), Some(new)) if self.kind == EventKind::Modify => {
                let (mut old, mut new) = (old.clone(), new.clone());
                strip_markers(&mut old);
                strip_markers(&mut new);
                old == new
            }
            _ => false,
        }
    }
}

/// One image of a changed item: one of `C`'s entities, or an item that is not one.
#[derive(Debug)]
pub enum Image<C> {
    /// The item read as `C`.
    Entity(C),
    /// An item that is not one of `C`'s entities, kept as it is, with the reason.
    Unknown(Unknown),
}

/// An image that is not one of the collection's entities.
#[derive(Debug)]
#[non_exhaustive]
pub struct Unknown {
    /// The image as stored.
    pub item: Item,
    /// Why it is not one of the entities.
    pub reason: UnknownReason,
}

/// Why an image is not one of the collection's entities.
#[derive(Debug)]
#[non_exhaustive]
pub enum UnknownReason {
    /// An item of an entity type the collection does not list (`found`), or without an
    /// entity type (`None`): another program's item, or an entity of the table that the
    /// collection leaves out.
    Foreign {
        /// The entity type written on the item, if any.
        found: Option<String>,
    },
    /// One of the library's own bookkeeping items: a tree's intent record or top record, an
    /// edge removal's progress, a unique value's sentinel (entity types such as
    /// `Folder:tree-op`, `User:unique`), or an edge's inverse
    /// item under its default name (`Follow~inverse`; the edge's own item changes in the same
    /// transaction). An inverse item given its own `name` is `Foreign` unless the collection
    /// lists it.
    Bookkeeping {
        /// The entity type written on the item.
        kind: String,
    },
    /// An item of one of the collection's entity types that does not decode as it (a
    /// missing or mistyped field, keys that disagree with its fields): the error a query
    /// would have returned.
    Corrupt(Error),
}

impl<C> Image<C> {
    /// The entity, if the image is one.
    pub fn entity(&self) -> Option<&C> {
        match self {
            Image::Entity(c) => Some(c),
            Image::Unknown(_) => None,
        }
    }

    /// The unknown item, if the image is not an entity.
    pub fn unknown(&self) -> Option<&Unknown> {
        match self {
            Image::Entity(_) => None,
            Image::Unknown(u) => Some(u),
        }
    }
}

impl<C: Collection> Image<C> {
    /// Reads one image as `C`: the library's bookkeeping items first (they are never one of
    /// `C`'s entities, even for a collection with a `#[collection(other)]` variant), then
    /// `C::from_item` as a query does.
    fn read(item: &Item, sealer: &Sealer) -> Image<C> {
        let unknown = |reason| Image::Unknown(Unknown { item: item.clone(), reason });
        let found = <C::Table as Table>::TYPE_ATTR.and_then(|attr| string_attr(item, attr));
        if let Some(kind) = found
            && is_bookkeeping_type(kind)
            && !C::TYPES.contains(&kind)
        {
            return unknown(UnknownReason::Bookkeeping { kind: kind.to_owned() });
        }
        match C::read(item.clone(), sealer) {
            Ok(entity) => Image::Entity(entity),
            Err(Error::UnknownEntityType { found, .. }) => {
                unknown(UnknownReason::Foreign { found })
            }
            Err(e) => unknown(UnknownReason::Corrupt(e)),
        }
    }
}

/// True for the entity type of one of the library's own bookkeeping items: the entity's name
/// and the item's kind after a colon (`Folder:tree-op`, `Folder:tree-top`,
/// `Follow:removal`), or an edge's inverse item under its default name (`Follow~inverse`),
/// which no entity name (a Rust identifier) can be.
fn is_bookkeeping_type(kind: &str) -> bool {
    kind.contains(':') || kind.ends_with("~inverse")
}
