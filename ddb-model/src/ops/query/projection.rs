//! Typed projections: a struct of some of an entity's fields (`#[derive(Projection)]`), read
//! from a `ProjectionExpression` of exactly those attributes, alone or as a variant of an item
//! collection.

use serde::de::{DeserializeOwned, Error as _};

use crate::db::Sealer;
use crate::error::Error;
use crate::expr::Attr;
use crate::item::Item;
use crate::model::{
    Entity, Identity, Table, TypeTag, from_item, identify, key_display, refuse_sealed,
    strip_bookkeeping, strip_identity,
};

/// Some of the fields of entity [`Entity`](Projection::Entity), read without the others.
/// Derive it on a struct whose fields are named and typed like fields of the entity.
///
/// Each field must be a field of the entity stored as its own attribute, of the same type or
/// an `Option` of it (a compile error at the field otherwise). A field of type `Option`
/// reads an absent attribute as `None`; any other field missing from the item is
/// [`Error::Deserialize`], never a default.
///
/// Projections are the variants of a projecting [`Collection`](crate::Collection): when every
/// variant of a collection is a projection, its queries send a `ProjectionExpression` of the
/// union of their attributes, plus what is needed to tell the variants apart and to page (the
/// keys and the entity-type attributes). Each item is still checked as the entity's (type,
/// and a stored key its fields could have written: [`Error::CorruptItem`] otherwise) before
/// its fields are read.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), ddb_model::Error> {
/// use ddb_model::{Collection, Entity, Op, Projection, local};
/// use serde::{Deserialize, Serialize};
///
/// #[derive(Entity, Serialize, Deserialize)]
/// #[entity(pk = "CUSTOMER#<id>", sk = "CUSTOMER")]
/// struct Customer {
///     id: String,
///     name: String,
///     #[serde(rename = "mail")]
///     email: Option<String>,
///     addresses: Vec<String>,
/// }
/// #[derive(Entity, Serialize, Deserialize)]
/// #[entity(pk = "CUSTOMER#<customer>", sk = "ORDER#<seq>")]
/// struct Order { customer: String, seq: u32, total: u64, lines: Vec<String> }
///
/// #[derive(Projection, Debug, PartialEq)]
/// #[projection(entity = Customer)]
/// struct CustomerCard { name: String, email: Option<String> }
/// #[derive(Projection, Debug, PartialEq)]
/// #[projection(entity = Order)]
/// struct OrderTotal { seq: u32, total: u64 }
///
/// /// A customer without their addresses, and their orders' totals.
/// #[derive(Collection, Debug, PartialEq)]
/// enum Summary { Customer(CustomerCard), Order(OrderTotal) }
///
/// // The attributes are the entity's own (after its serde renames).
/// assert_eq!(<CustomerCard as Projection>::ATTRS, ["name", "mail"]);
///
/// let db = local::isolated_db().await?;
/// let addresses = vec!["1 Main St".repeat(100); 20];
/// Customer { id: "c1".into(), name: "Ann".into(), email: None, addresses }.put(&db).await?;
/// Order { customer: "c1".into(), seq: 1, total: 250, lines: vec!["x".repeat(500)] }
///     .put(&db).await?;
/// let summary = Customer::partition(&db, "c1").collection::<Summary>().all().await?;
/// assert_eq!(
///     summary,
///     [
///         Summary::Customer(CustomerCard { name: "Ann".into(), email: None }),
///         Summary::Order(OrderTotal { seq: 1, total: 250 }),
///     ]
/// );
/// assert_eq!(db.requests().get(Op::Query), 1);
/// # Ok(()) }
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a projection of an entity",
    label = "add `#[derive(ddb_model::Projection)]` and `#[projection(entity = ..)]` to this struct"
)]
pub trait Projection: Sized + Send + 'static {
    /// The entity the fields are read from.
    type Entity: Entity;
    /// The stored attributes of the fields, in field order.
    const ATTRS: &'static [&'static str];
    /// Reads the fields from the projected attributes of one item.
    #[doc(hidden)]
    fn from_fields(fields: &mut ProjectedFields) -> Result<Self, serde_dynamo::Error>;
}

/// The attributes of one item, handed field by field to a generated [`Projection`].
#[doc(hidden)]
pub struct ProjectedFields {
    item: Item,
}

impl ProjectedFields {
    /// Deserializes attribute `attr` as the type of field `field` (an absent attribute reads
    /// as `NULL`: `None` for an `Option`, an error for anything else).
    pub fn take<T: DeserializeOwned>(
        &mut self,
        field: &'static str,
        attr: &'static str,
    ) -> Result<T, serde_dynamo::Error> {
        match self.item.remove(attr) {
            Some(value) => serde_dynamo::from_attribute_value(value).map_err(|e| {
                serde_dynamo::Error::custom(format_args!("field `{field}` (`{attr}`): {e}"))
            }),
            None => serde_dynamo::from_attribute_value(
                aws_sdk_dynamodb::types::AttributeValue::Null(true),
            )
            .map_err(|_| serde_dynamo::Error::missing_field(field)),
        }
    }
}

/// Reads `item` as projection `P` of entity `P::Entity`: the item must be one of the
/// entity's ([`Error::WrongEntityType`]), its stored key must parse with the entity's
/// templates ([`Error::CorruptItem`]), and every field must deserialize
/// ([`Error::Deserialize`]).
pub(crate) fn projection_from_item<P: Projection>(mut item: Item) -> Result<P, Error> {
    let table = |a: &str| crate::model::string_attr(&item, a).map(str::to_owned);
    let (t_pk, t_sk) =
        (<<P::Entity as Entity>::Table as Table>::PK, <<P::Entity as Entity>::Table as Table>::SK);
    if let Err(found) = identify::<P::Entity>(&item) {
        let key = key_display(table(t_pk).as_deref(), t_sk.and_then(table).as_deref());
        return Err(Error::WrongEntityType { expected: <P::Entity as Entity>::NAME, found, key });
    }
    let (pk, sk) = strip_bookkeeping::<<P::Entity as Entity>::Table>(&mut item);
    strip_identity::<P::Entity>(&mut item);
    let key = || key_display(pk.as_deref(), sk.as_deref());
    // The fields may leave out the key fields: the stored key is checked by parsing it, and
    // parses only if the entity's fields encode to exactly it.
    if let Err(e) =
        <P::Entity as Entity>::parse_key(pk.as_deref().unwrap_or_default(), sk.as_deref())
    {
        return Err(Error::CorruptItem {
            entity: <P::Entity as Entity>::NAME,
            key: key(),
            reason: crate::error::CorruptReason::ForeignKey { problem: Box::new(e) },
        });
    }
    P::from_fields(&mut ProjectedFields { item }).map_err(|source| Error::Deserialize {
        entity: <P::Entity as Entity>::NAME,
        key: key(),
        source,
    })
}

/// What a variant of a [`Collection`](crate::Collection) holds: a whole entity, or a
/// [`Projection`] of one.
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "`{Self}` is neither an entity nor a projection of one",
    label = "a collection variant holds an entity (`#[derive(Entity)]`) or a projection of one (`#[derive(Projection)]`)"
)]
pub trait Variant: Sized + Send + 'static {
    /// The entity the variant reads.
    type Entity: Entity;
    /// The attributes read (`None`: the whole item).
    const ATTRS: Option<&'static [&'static str]>;
    /// Reads one item of the entity.
    fn from_item(item: Item) -> Result<Self, Error>;
    /// Reads one item read through a handle with `sealer`. A projection cannot verify a
    /// sealed entity's item (the signature covers all of it): refused.
    fn read(item: Item, sealer: &Sealer) -> Result<Self, Error> {
        Self::can_read(sealer)?;
        Self::from_item(item)
    }
    /// Refuses, before anything is sent, a read whose items this variant could not open.
    fn can_read(sealer: &Sealer) -> Result<(), Error> {
        let _ = sealer;
        refuse_sealed::<Self::Entity>("projection")
    }
}

impl<E: Entity> Variant for E {
    type Entity = E;
    const ATTRS: Option<&'static [&'static str]> = None;
    fn from_item(item: Item) -> Result<E, Error> {
        from_item::<E>(item)
    }
    fn read(item: Item, sealer: &Sealer) -> Result<E, Error> {
        sealer.open::<E>(item)
    }
    fn can_read(sealer: &Sealer) -> Result<(), Error> {
        sealer.can_seal::<E>()
    }
}

/// The [`Variant`] of a projection (`#[derive(Projection)]` delegates to it); a sealed
/// entity's items are refused.
#[doc(hidden)]
pub fn projection_variant<P: Projection>(item: Item) -> Result<P, Error> {
    refuse_sealed::<P::Entity>("projection")?;
    projection_from_item::<P>(item)
}

/// What [`collection_projection`] knows of one variant: the attributes it reads (`None`:
/// the whole item), its entity's identity and constants.
#[doc(hidden)]
pub(crate) type VariantAttrs = (Option<&'static [&'static str]>, Identity, &'static [TypeTag]);

/// The attributes a collection reads, given each variant's attributes, identity and
/// constants: `None` (whole items) when a variant reads whole items; otherwise the union of
/// the variants' attributes and of the attributes that tell them apart (the table's type
/// attribute, which also tells a keys-identified entity's items from tagged ones, each
/// entity's own, and their constants). The query adds the key attributes.
pub fn collection_projection<T: Table>(variants: &[VariantAttrs]) -> Option<Vec<&'static str>> {
    let mut attrs: Vec<&'static str> = Vec::new();
    for (read, identity, constants) in variants {
        attrs.extend_from_slice((*read)?);
        if let Identity::Tagged(tag) = identity {
            attrs.push(tag.attr);
        }
        attrs.extend(constants.iter().map(|c| c.attr));
    }
    attrs.extend(T::TYPE_ATTR);
    let mut seen = std::collections::HashSet::new();
    attrs.retain(|a| seen.insert(*a));
    Some(attrs)
}

/// A field of a projection may be of the entity field's type `T` or an `Option` of it.
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "a projection field of type `{Self}` cannot read an entity field of type `{T}`",
    label = "use the entity field's type `{T}`, or `Option<{T}>`"
)]
pub trait ProjectsAs<T> {}
impl<T> ProjectsAs<T> for T {}
impl<T> ProjectsAs<T> for Option<T> {}

/// A typed path whose field a projection field of type `P` can read.
#[doc(hidden)]
pub trait ProjectedBy<P> {}
impl<P: ProjectsAs<T>, E, T, A> ProjectedBy<P> for Attr<E, T, A> {}

/// Compiles when a projection field of type `P` can read the entity field of typed path
/// `attr` (generated by `#[derive(Projection)]` at the field's type).
#[doc(hidden)]
pub const fn projected_field<P, X: ProjectedBy<P>>(_attr: &X) {}
