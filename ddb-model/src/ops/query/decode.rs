//! What a query or scan turns its items into: an entity, an item collection (several entity
//! types), a projection, or raw items.

use std::marker::PhantomData;

use serde::de::DeserializeOwned;

use crate::db::{Db, Sealer};
use crate::error::Error;
use crate::item::Item;
use crate::model::{
    Entity, RekeyCopies, Table, TypeTag, any_rekeyed, from_item, is_entity_type_item, key_display,
    rekey_copies, string_attr, strip_bookkeeping, strip_identity,
};

/// Several entity types read together, typically the items of one partition (an *item
/// collection*). Derive it on an enum with one single-field variant per entity type:
///
/// ```
/// use ddb_model::{Collection, Db, DefaultTable, Entity};
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
/// assert_eq!(<UserItems as Collection>::NAME, "UserItems");
/// // `User` and `Order` name no table: they, and `UserItems`, live in `DefaultTable`.
/// fn db_of(db: &Db<<UserItems as Collection>::Table>) -> &Db<DefaultTable> {
///     db
/// }
/// ```
///
/// An item is dispatched on its entity-type attribute. An item of a type the enum does not
/// list is an [`Error::UnknownEntityType`], unless one variant is marked
/// `#[collection(other)]` and holds an [`Item`]: it then receives such items as they are.
/// All entity types must live in the same table (it does not compile otherwise).
///
/// A variant may hold a [`Projection`](crate::Projection) of its entity instead of the whole
/// entity. When every variant does, a query of the collection reads only their fields (one
/// `ProjectionExpression`, the union of the fields, the keys and the entity-type attributes);
/// the `#[collection(other)]` variant then receives an unlisted item's attributes among
/// those. When one variant holds a whole entity, the query reads whole items.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an item collection",
    label = "add `#[derive(ddb_model::Collection)]` to an enum with one variant per entity type"
)]
pub trait Collection: Sized + Send + 'static {
    /// The table all the entity types are stored in: a query of the collection runs on a
    /// [`Db`](crate::Db) of this table.
    type Table: Table;
    /// The enum's name, for errors and cursors.
    const NAME: &'static str;
    /// The entity types the enum reads, in variant order (the `#[collection(other)]`
    /// variant, if any, is not one of them).
    const TYPES: &'static [&'static str];
    /// Reads one item as the variant of its entity type ([`Error::UnknownEntityType`] for a
    /// type the enum does not list and has no `#[collection(other)]` variant for).
    /// Example: [`Decode`].
    fn from_item(item: Item) -> Result<Self, Error>;

    /// The position of the variant `item` is an item of (tags first, then keys), if any.
    #[doc(hidden)]
    fn variant_of(_item: &Item) -> Option<usize> {
        None
    }

    /// The position of the first variant whose key templates read the key attributes in
    /// `keys` (an item with nothing but its keys, as a `KEYS_ONLY` stream record has), if any.
    #[doc(hidden)]
    fn variant_of_key(_keys: &Item) -> Option<usize> {
        None
    }

    /// True when every variant is tagged by the table's type attribute (a server-side
    /// filter on it selects them).
    #[doc(hidden)]
    const TAGGED_BY_TABLE: bool = true;

    /// The constant attributes of each entity type of [`TYPES`](Collection::TYPES), in
    /// the same order (a server-side filter selects each type with its constants).
    #[doc(hidden)]
    const CONSTANTS: &'static [&'static [TypeTag]] = &[];

    /// How to tell the two copies of each entity type of [`TYPES`](Collection::TYPES) apart,
    /// in the same order (`None` for an entity that is not being re-keyed).
    #[doc(hidden)]
    const COPIES: &'static [Option<RekeyCopies>] = &[];

    /// The attributes a query of the collection reads (its `ProjectionExpression`, without
    /// the keys), `None` for whole items: a list only when every variant is a
    /// [`Projection`](crate::Projection).
    #[doc(hidden)]
    fn projection() -> Option<Vec<&'static str>> {
        None
    }

    /// Reads one item read through a handle with `sealer`: a sealed entity's item is
    /// verified and decrypted with its keyring (the derive writes it; `from_item` is it
    /// without a keyring).
    #[doc(hidden)]
    fn read(item: Item, sealer: &Sealer) -> Result<Self, Error> {
        let _ = sealer;
        Self::from_item(item)
    }

    /// Refuses, before anything is sent, a read through a handle with `sealer` whose items a
    /// variant could not open.
    #[doc(hidden)]
    fn can_read(sealer: &Sealer) -> Result<(), Error> {
        let _ = sealer;
        Ok(())
    }
}

/// True when `item` is an item of one of `C`'s variants.
fn in_collection<C: Collection>(item: &Item) -> bool {
    C::variant_of(item).is_some()
}

/// The entity type written on `item`, if any.
#[doc(hidden)]
pub fn item_type<T: Table>(item: &Item) -> Option<&str> {
    string_attr(item, T::TYPE_ATTR?)
}

/// The error for an item of a type that collection `C` does not list.
#[doc(hidden)]
pub fn unknown_type<T: Table>(collection: &'static str, item: &Item) -> Error {
    let text = |attr: &str| string_attr(item, attr);
    Error::UnknownEntityType {
        collection,
        found: item_type::<T>(item).map(str::to_owned),
        key: key_display(text(T::PK), T::SK.and_then(text)),
    }
}

/// Turns raw items into a query's output type: the `D` of [`Query`](crate::Query), chosen by
/// the query's constructor and by [`project`](crate::Query::project),
/// [`collection`](crate::Query::collection) and [`items`](crate::Query::items).
/// Implemented by the markers [`AsEntity`], [`AsCollection`], [`AsProjection`] and
/// [`AsItem`]; code generic over it accepts any query.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), ddb_model::Error> {
/// use ddb_model::{DefaultTable, Entity, Error, Query, local, ops::Decode};
/// # use serde::{Deserialize, Serialize};
///
/// #[derive(Entity, Serialize, Deserialize)]
/// #[entity(pk = "USER#<user>", sk = "ORDER#<seq>")]
/// struct Order { user: String, seq: u32, total: u64 }
///
/// /// The last item of any query of the table, whatever it reads.
/// async fn last<D: Decode>(
///     query: Query<'_, DefaultTable, D>,
/// ) -> Result<Option<D::Output>, Error> {
///     query.reverse().first().await
/// }
///
/// let db = local::isolated_db().await?;
/// Order { user: "ann".into(), seq: 7, total: 250 }.put(&db).await?;
/// assert_eq!(last(Order::partition(&db, "ann")).await?.map(|o| o.seq), Some(7));
/// let raw = last(Order::partition(&db, "ann").items()).await?.expect("one item");
/// assert!(raw.contains_key("pk"));
/// # Ok(()) }
/// ```
///
/// What each marker names and keeps (`User`, `Order` and `UserItems` as in the example of
/// [`Collection`]):
///
/// ```
/// # fn main() -> Result<(), ddb_model::Error> {
/// use ddb_model::aws_sdk_dynamodb::types::AttributeValue;
/// use ddb_model::ops::{AsCollection, AsCollectionOnly, AsEntity, AsItem, Decode};
/// use ddb_model::{Collection, Error, Item, entity::to_item};
/// # use serde::{Deserialize, Serialize};
/// # #[derive(ddb_model::Entity, Serialize, Deserialize)]
/// # #[entity(pk = "USER#<id>", sk = "PROFILE")]
/// # struct User { id: String, name: String }
/// # #[derive(ddb_model::Entity, Serialize, Deserialize)]
/// # #[entity(pk = "USER#<user>", sk = "ORDER#<seq>")]
/// # struct Order { user: String, seq: u32, total: u64 }
/// # #[derive(ddb_model::Collection)]
/// # enum UserItems { User(User), Order(Order) }
///
/// // `NAME` is part of what a cursor is bound to.
/// assert_eq!(<AsEntity<Order> as Decode>::NAME, "Order");
/// assert_eq!(<AsCollection<UserItems> as Decode>::NAME, "UserItems");
/// assert_eq!(<AsItem as Decode>::NAME, "<item>");
/// // The server-side filters on the entity-type attribute.
/// assert_eq!(AsEntity::<Order>::type_filter().map(|t| t.value), Some("Order"));
/// assert_eq!(AsCollection::<UserItems>::type_filter(), None);
/// assert_eq!(AsItem::type_filter(), None);
/// assert_eq!(AsCollectionOnly::<UserItems>::type_set(), Some(&["User", "Order"][..]));
/// assert_eq!(AsCollection::<UserItems>::type_set(), None);
/// // An item of another entity type is an error, never the wrong struct.
/// let item = to_item(&Order { user: "ann".into(), seq: 1, total: 250 }, None)?;
/// assert_eq!(AsEntity::<Order>::decode(item.clone())?.total, 250);
/// let err = AsEntity::<User>::decode(item.clone()).err();
/// assert!(matches!(err, Some(Error::WrongEntityType { expected: "User", .. })));
/// // A collection dispatches on the entity-type attribute (`Collection::from_item`).
/// let read = UserItems::from_item(item.clone())?;
/// assert!(matches!(read, UserItems::Order(o) if o.total == 250));
/// let mut ghost = item;
/// ghost.insert("_type".into(), AttributeValue::S("Ghost".into()));
/// let err = UserItems::from_item(ghost.clone()).err();
/// assert!(matches!(err, Some(Error::UnknownEntityType { collection: "UserItems", .. })));
/// #[derive(Collection)]
/// enum Tolerant { Order(Order), #[collection(other)] Other(Item) }
/// assert!(matches!(Tolerant::from_item(ghost)?, Tolerant::Other(_)));
/// # Ok(()) }
/// ```
pub trait Decode: Send + Sync + 'static {
    /// The type of each result: what [`all`](crate::Query::all) collects and
    /// [`stream`](crate::Query::stream) yields.
    type Output: Send + 'static;
    /// A name for the output type, part of what a cursor is bound to (a cursor of an
    /// entity query does not continue a collection query of the same partition).
    const NAME: &'static str;
    /// True when the results are one entity with unique constraints (`#[unique]`), whose
    /// items a batch delete ([`delete_all`](crate::Query::delete_all)) cannot remove without
    /// leaving their sentinel items behind.
    #[doc(hidden)]
    const UNIQUE: bool = false;
    /// The entity type the query keeps (a server-side filter on the entity-type attribute),
    /// `None` for all types.
    fn type_filter() -> Option<TypeTag> {
        None
    }
    /// For an entity told apart by its keys ([`Identity::Keys`](crate::entity::Identity)), which no
    /// filter can select: the test each returned item must pass to be read (the others in
    /// the key range are skipped, as a type filter would drop them). `None` for the rest.
    #[doc(hidden)]
    fn item_filter() -> Option<fn(&Item) -> bool> {
        None
    }
    /// True when [`item_filter`](Decode::item_filter) reads more than the keys and the
    /// table's type attribute (an entity's own type attribute, its constants): a count with
    /// it reads whole items.
    #[doc(hidden)]
    const ITEM_FILTER_READS_ITEM: bool = false;
    /// The constant attributes of the entity the query keeps ([`Entity::CONSTANTS`]): a
    /// server-side filter on each, beside the one on the entity type.
    #[doc(hidden)]
    fn constants() -> &'static [TypeTag] {
        &[]
    }
    /// The constant attributes of each of [`type_set`](Decode::type_set)'s types, in its
    /// order: the filter keeps an item of a type that holds them.
    #[doc(hidden)]
    fn type_set_constants() -> &'static [&'static [TypeTag]] {
        &[]
    }
    /// The entity types the query keeps when it keeps several (a server-side filter
    /// `type IN (..)` on the table's type attribute), `None` for no such filter: only
    /// [`AsCollectionOnly`] has one. A table without a type attribute has no such filter.
    fn type_set() -> Option<&'static [&'static str]> {
        None
    }
    /// The attribute holding the expiry time of the items read (`#[entity(ttl = ..)]`):
    /// items past it are filtered out unless the query includes them. `None`: no expiry.
    #[doc(hidden)]
    fn expiry_attr() -> Option<&'static str> {
        None
    }
    /// The attributes to read besides the keys (a `ProjectionExpression`), `None` for whole
    /// items: a projecting collection's.
    #[doc(hidden)]
    fn projection() -> Option<Vec<&'static str>> {
        None
    }
    /// Reads one item.
    fn decode(item: Item) -> Result<Self::Output, Error>;
    /// Reads one item read through `db`: an entity's sealed item (`#[encrypt]`,
    /// `#[sign_only]`) is verified and decrypted with its keyring first.
    #[doc(hidden)]
    fn decode_in<T: Table>(db: &Db<T>, item: Item) -> Result<Self::Output, Error> {
        let _ = db;
        Self::decode(item)
    }
    /// Refuses a read through `db` that could not open the items (a sealed entity's, on a
    /// handle without a keyring), before anything is sent.
    #[doc(hidden)]
    fn can_read<T: Table>(db: &Db<T>) -> Result<(), Error> {
        let _ = db;
        Ok(())
    }

    /// Refuses a query of the table's own key through `db` that would read the wrong copies
    /// (a re-keyed entity whose old copies the handle's phase reads).
    #[doc(hidden)]
    fn can_query_table_key<T: Table>(db: &Db<T>) -> Result<(), Error> {
        let _ = db;
        Ok(())
    }

    /// True when the items read may be copies of a re-keyed entity's items
    /// (`#[entity(rekey(..))]`), of which a read keeps the one its phase reads
    /// ([`copies_of`](Decode::copies_of)): a count then reads the keys.
    #[doc(hidden)]
    const REKEYED: bool = false;

    /// The re-keyed entity `item` is an item of, if any.
    #[doc(hidden)]
    fn copies_of(item: &Item) -> Option<RekeyCopies> {
        let _ = item;
        None
    }
}

/// Decodes items as entity `E` (only items of type `E` are read): the output of every
/// generated query constructor (see [`EntityQuery`](crate::EntityQuery), and its example).
pub struct AsEntity<E>(PhantomData<fn() -> E>);

impl<E: Entity> Decode for AsEntity<E> {
    type Output = E;
    const NAME: &'static str = E::NAME;
    const UNIQUE: bool = !E::UNIQUES.is_empty();
    fn expiry_attr() -> Option<&'static str> {
        E::TTL.map(|t| t.attr)
    }
    fn type_filter() -> Option<TypeTag> {
        E::IDENTITY.tag()
    }
    fn constants() -> &'static [TypeTag] {
        E::CONSTANTS
    }
    fn item_filter() -> Option<fn(&Item) -> bool> {
        // The constants are the server-side filter's.
        E::IDENTITY.tag().is_none().then_some(is_entity_type_item::<E>)
    }
    fn decode(item: Item) -> Result<E, Error> {
        from_item::<E>(item)
    }
    fn decode_in<T: Table>(db: &Db<T>, item: Item) -> Result<E, Error> {
        db.open::<E>(item)
    }
    fn can_read<T: Table>(db: &Db<T>) -> Result<(), Error> {
        db.can_seal::<E>()
    }
    fn can_query_table_key<T: Table>(db: &Db<T>) -> Result<(), Error> {
        crate::ops::rekey::refuse_in::<E, T>(
            db,
            "a query of the table's key",
            crate::ops::rekey::READS_OLD,
        )
    }
    const REKEYED: bool = E::REKEY.is_some();
    fn copies_of(_: &Item) -> Option<RekeyCopies> {
        rekey_copies::<E>()
    }
}

/// Decodes items as collection `C` (items of every type are read), made by
/// [`Query::collection`](crate::Query::collection) (see its example); with `ONLY`, the items
/// of `C`'s entity types only ([`AsCollectionOnly`]).
pub struct AsCollection<C, const ONLY: bool = false>(PhantomData<fn() -> C>);

/// Decodes items as collection `C`, reading only the items of `C`'s entity types, made by
/// [`Query::collection_only`](crate::Query::collection_only) (see its example): a
/// server-side filter on the entity-type attribute (`type IN (..)`) keeps the others out of
/// the response.
pub type AsCollectionOnly<C> = AsCollection<C, true>;

impl<C: Collection, const ONLY: bool> Decode for AsCollection<C, ONLY> {
    type Output = C;
    const NAME: &'static str = C::NAME;
    /// The table's expiry attribute: the service expires any item with a Number there, of
    /// whatever entity type, so a collection hides them all (unless `include_expired`).
    fn expiry_attr() -> Option<&'static str> {
        <C::Table as crate::model::Table>::TTL
    }
    fn type_set() -> Option<&'static [&'static str]> {
        (ONLY && C::TAGGED_BY_TABLE).then_some(C::TYPES)
    }
    fn type_set_constants() -> &'static [&'static [TypeTag]] {
        C::CONSTANTS
    }
    fn item_filter() -> Option<fn(&Item) -> bool> {
        // Entities told apart by their keys or by their own attribute: checked on arrival.
        (ONLY && !C::TAGGED_BY_TABLE).then_some(in_collection::<C>)
    }
    // The variants' own type attributes and constants.
    const ITEM_FILTER_READS_ITEM: bool = true;
    fn projection() -> Option<Vec<&'static str>> {
        C::projection()
    }
    fn decode(item: Item) -> Result<C, Error> {
        C::from_item(item)
    }
    fn decode_in<T: Table>(db: &Db<T>, item: Item) -> Result<C, Error> {
        C::read(item, db.sealer_ref())
    }
    fn can_read<T: Table>(db: &Db<T>) -> Result<(), Error> {
        C::can_read(db.sealer_ref())
    }
    /// A variant's items under its table key's other layout are not in the partition.
    fn can_query_table_key<T: Table>(db: &Db<T>) -> Result<(), Error> {
        for copies in C::COPIES.iter().flatten() {
            crate::ops::rekey::refuse_named(
                db,
                copies.entity,
                "a collection query of the table's key",
                crate::ops::rekey::READS_OLD,
            )?;
        }
        Ok(())
    }
    const REKEYED: bool = any_rekeyed(C::COPIES);
    fn copies_of(item: &Item) -> Option<RekeyCopies> {
        C::variant_of(item).and_then(|i| C::COPIES.get(i).copied().flatten())
    }
}

/// Decodes the projected attributes of items of entity `E` as `P`, made by
/// [`Query::project`](crate::Query::project) (see its example). The key attributes (of the table and
/// of its indexes) and the entity-type attribute are removed first, so `P` sees only the
/// projected fields. A stored key that `E`'s key fields could not have produced is
/// [`Error::CorruptItem`].
pub struct AsProjection<E, P>(PhantomData<fn() -> (E, P)>);

impl<E: Entity, P: DeserializeOwned + Send + 'static> Decode for AsProjection<E, P> {
    type Output = P;
    const NAME: &'static str = E::NAME;
    const UNIQUE: bool = !E::UNIQUES.is_empty();
    fn expiry_attr() -> Option<&'static str> {
        E::TTL.map(|t| t.attr)
    }
    fn type_filter() -> Option<TypeTag> {
        E::IDENTITY.tag()
    }
    fn constants() -> &'static [TypeTag] {
        E::CONSTANTS
    }
    fn item_filter() -> Option<fn(&Item) -> bool> {
        // The constants are the server-side filter's.
        E::IDENTITY.tag().is_none().then_some(is_entity_type_item::<E>)
    }
    fn decode(mut item: Item) -> Result<P, Error> {
        let (pk, sk) = strip_bookkeeping::<E::Table>(&mut item);
        strip_identity::<E>(&mut item);
        // The projection lacks the key fields, so the stored key is checked by parsing it:
        // a key parses only if `E`'s fields encode to exactly it.
        if let Err(e) = E::parse_key(pk.as_deref().unwrap_or_default(), sk.as_deref()) {
            return Err(Error::CorruptItem {
                entity: E::NAME,
                key: key_display(pk.as_deref(), sk.as_deref()),
                reason: crate::error::CorruptReason::ForeignKey { problem: Box::new(e) },
            });
        }
        crate::item::from_fields(item).map_err(|source| Error::Deserialize {
            entity: E::NAME,
            key: key_display(pk.as_deref(), sk.as_deref()),
            source,
        })
    }
    /// A projection cannot verify a sealed entity's item (its signature covers all of it).
    fn can_read<T: Table>(_: &Db<T>) -> Result<(), Error> {
        crate::model::refuse_sealed::<E>("projection")
    }
    fn can_query_table_key<T: Table>(db: &Db<T>) -> Result<(), Error> {
        AsEntity::<E>::can_query_table_key(db)
    }
    const REKEYED: bool = E::REKEY.is_some();
    fn copies_of(_: &Item) -> Option<RekeyCopies> {
        rekey_copies::<E>()
    }
}

/// Keeps raw items as they are stored (every entity type), made by
/// [`Query::items`](crate::Query::items) (see its example).
pub struct AsItem;

impl Decode for AsItem {
    type Output = Item;
    const NAME: &'static str = "<item>";
    fn decode(item: Item) -> Result<Item, Error> {
        Ok(item)
    }
}
