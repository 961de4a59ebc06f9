//! What a query or scan turns its items into: an entity, an item collection (several entity
//! types), a projection, or raw items.

use std::marker::PhantomData;

use aws_sdk_dynamodb::types::AttributeValue;
use serde::de::DeserializeOwned;

use crate::entity::{Entity, from_item, key_display};
use crate::error::Error;
use crate::item::Item;
use crate::table::Table;

/// Several entity types read together, typically the items of one partition (an *item
/// collection*). Derive it on an enum with one single-field variant per entity type:
///
/// ```
/// use ddb_model::{Collection, Entity};
/// use serde::{Deserialize, Serialize};
///
/// #[derive(Entity, Serialize, Deserialize)]
/// #[entity(pk = "USER#<id>", sk = "PROFILE")]
/// struct User { id: String, name: String }
///
/// #[derive(Entity, Serialize, Deserialize)]
/// #[entity(pk = "USER#<user>", sk = "ORDER#<seq>")]
/// struct Order { user: String, seq: u32, total: u64 }
///
/// #[derive(Collection)]
/// enum UserItems {
///     User(User),
///     Order(Order),
/// }
///
/// assert_eq!(<UserItems as Collection>::TYPES, ["User", "Order"]);
/// ```
///
/// An item is dispatched on its entity-type attribute. An item of a type the enum does not
/// list is an [`Error::UnknownEntityType`], unless one variant is marked
/// `#[collection(other)]` and holds an [`Item`]: it then receives such items as they are.
/// All entity types must live in the same table (it does not compile otherwise).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an item collection",
    label = "add `#[derive(ddb_model::Collection)]` to an enum with one variant per entity type"
)]
pub trait Collection: Sized + Send + 'static {
    /// The table all the entity types are stored in.
    type Table: Table;
    /// The enum's name, for errors and cursors.
    const NAME: &'static str;
    /// The entity types the enum reads, in variant order.
    const TYPES: &'static [&'static str];
    /// Reads one item as the variant of its entity type.
    fn from_item(item: Item) -> Result<Self, Error>;
}

/// The entity type written on `item`, if any.
#[doc(hidden)]
pub fn item_type<T: Table>(item: &Item) -> Option<&str> {
    match item.get(T::TYPE_ATTR) {
        Some(AttributeValue::S(t)) => Some(t),
        _ => None,
    }
}

/// The error for an item of a type that collection `C` does not list.
#[doc(hidden)]
pub fn unknown_type<T: Table>(collection: &'static str, item: &Item) -> Error {
    let text = |attr: &str| match item.get(attr) {
        Some(AttributeValue::S(s)) => Some(s.as_str()),
        _ => None,
    };
    Error::UnknownEntityType {
        collection,
        found: item_type::<T>(item).map(str::to_owned),
        key: key_display(text(T::PK), T::SK.and_then(text)),
    }
}

/// Turns raw items into a query's output type. Implemented by the markers [`AsEntity`],
/// [`AsCollection`], [`AsProjection`] and [`AsItem`].
pub trait Decode: Send + Sync + 'static {
    /// The type of each result.
    type Output: Send + 'static;
    /// A name for the output type, part of what a cursor is bound to.
    const NAME: &'static str;
    /// The entity type the query keeps (a server-side filter), `None` for all types.
    fn type_filter() -> Option<&'static str>;
    /// Reads one item.
    fn decode(item: Item) -> Result<Self::Output, Error>;
}

/// Decodes items as entity `E` (only items of type `E` are read).
pub struct AsEntity<E>(PhantomData<fn() -> E>);

impl<E: Entity> Decode for AsEntity<E> {
    type Output = E;
    const NAME: &'static str = E::NAME;
    fn type_filter() -> Option<&'static str> {
        Some(E::NAME)
    }
    fn decode(item: Item) -> Result<E, Error> {
        from_item::<E>(item)
    }
}

/// Decodes items as collection `C` (items of every type are read).
pub struct AsCollection<C>(PhantomData<fn() -> C>);

impl<C: Collection> Decode for AsCollection<C> {
    type Output = C;
    const NAME: &'static str = C::NAME;
    fn type_filter() -> Option<&'static str> {
        None
    }
    fn decode(item: Item) -> Result<C, Error> {
        C::from_item(item)
    }
}

/// Decodes the projected attributes of items of entity `E` as `P`.
pub struct AsProjection<E, P>(PhantomData<fn() -> (E, P)>);

impl<E: Entity, P: DeserializeOwned + Send + 'static> Decode for AsProjection<E, P> {
    type Output = P;
    const NAME: &'static str = E::NAME;
    fn type_filter() -> Option<&'static str> {
        Some(E::NAME)
    }
    fn decode(mut item: Item) -> Result<P, Error> {
        let table = <E::Table as Table>::PK;
        let sk = <E::Table as Table>::SK;
        let text = |item: &Item, attr: &str| match item.get(attr) {
            Some(AttributeValue::S(s)) => Some(s.clone()),
            _ => None,
        };
        let key =
            key_display(text(&item, table).as_deref(), sk.and_then(|a| text(&item, a)).as_deref());
        item.remove(table);
        if let Some(sk) = sk {
            item.remove(sk);
        }
        item.remove(<E::Table as Table>::TYPE_ATTR);
        for index in <E::Table as Table>::INDEXES {
            item.remove(index.pk);
            if let Some(sk) = index.sk {
                item.remove(sk);
            }
        }
        serde_dynamo::from_item(item).map_err(|source| Error::Deserialize {
            entity: E::NAME,
            key,
            source,
        })
    }
}

/// Keeps raw items as they are stored (every entity type).
pub struct AsItem;

impl Decode for AsItem {
    type Output = Item;
    const NAME: &'static str = "<item>";
    fn type_filter() -> Option<&'static str> {
        None
    }
    fn decode(item: Item) -> Result<Item, Error> {
        Ok(item)
    }
}
