//! What generated code calls, reached as `ddb_model::__private` (the `__ddb` alias in the
//! derive's output). Not a public API: names come and go with the derive.
//!
//! Generated code reaches the entity's table only through the helpers at the end, generic
//! over the entity: a table type that is not a `Table` is then one error, at
//! `type Table = ..`, instead of one per use.
// Hidden here, not only at the re-export, so that compiler messages name public paths
// (`ddb_model::aws_sdk_dynamodb::..`) rather than this module's.
#![doc(hidden)]

pub use super::keys::{
    ComputeArg, ComputeFn, ComputedInput, EntityKeys, IndexChanges, IndexKeys, IndexSink,
    UpdatePart, computed, computed_text, decode, decode_key, field_value, from_field, from_key,
    index_arg, key_arg, key_arg_serialized, key_arg_stored, update_index_keys,
};
pub use super::messages::{
    ConstMsg, attr_clash, constant_clash, follow_check, multi_attr_kind_check,
    multi_attr_name_check, multi_index_check, vector_field_check,
};
pub use crate::db::{Db, Sealer};
pub use crate::error::Error;
pub use crate::expr::{Attr, ReadOnly, Writable};
pub use crate::expr::{Condition, Path, UpdateActions};
pub use crate::item::Item;
pub use crate::key::{
    IndexArg, IndexKeyPart, Key, KeyArg, KeyPart, KeyPartError, KeyReader, KeySeg, KeyTemplate,
    PartText, index_key_text, key_part, lit, part, push_component, split_components, split_variant,
    verbatim,
};
pub use crate::key::{KeyFormat, Precision, formatted, iso8601, text_format, unpadded};
pub use crate::model::{
    AttrShape, EntityShape, FieldShape, IndexShape, MultiIndexShape, TreeShape, VectorShape,
};
pub use crate::model::{Crypto, CryptoField};
pub use crate::model::{
    DefaultTable, Entity, Identity, TypeTag, VersionDef, VersionField, version_fns,
};
pub use crate::model::{Expiry, ExpiryField, TtlDef, TtlFns, ttl_fns};
pub use crate::model::{GeneratedFns, IdKind, generated_fns};
pub use crate::model::{
    RekeyCopies, RekeyDef, SchemaDef, UpgradeFn, ValidateFn, any_rekeyed, hook_error, rekey_copies,
};
pub use crate::model::{Stamp, TimestampField, TimestampsDef, stamp_now, stamp_value, stamped};
pub use crate::model::{UniqueDef, UniqueField, UniqueText};
pub use crate::ops::Target;
pub use crate::ops::{AsCollection, AsItem, AsProjection, BoxFuture, Cursor, Page, Query};
pub use crate::ops::{
    Collection, Delete, EntityQuery, Get, KeyStart, OnIndex, OnTable, Put, QueryFrom, Update,
    item_type, unknown_type,
};
pub use crate::ops::{Level, LevelArg, LevelQuery};
pub use crate::ops::{
    ProjectedFields, Projection, ProjectsAs, Variant, collection_projection, projected_field,
    projection_variant,
};
pub use aws_sdk_dynamodb::types::AttributeValue;
pub use core::ops::Bound::{self, Excluded, Included, Unbounded};
pub use futures_util::stream::BoxStream;
pub use serde::de::DeserializeOwned;
pub use serde_dynamo::Error as SerdeDynamoError;
pub use std::vec::Vec;

pub use crate::tree::{
    AdjacencyTree, ClosureTree, IdHierarchy, IdTreeDef, NESTED_BOOKKEEPING_ATTRS, NestedTree,
    TreeStrategy, adjacency_index_keys, parent_fns,
};
pub use crate::tree::{
    Hierarchy, PathTree, TREE_BOOKKEEPING_ATTRS, TreeDef, TreePath, path_fns, tree_index_keys,
};

/// Compiles only when `B` is stored in `A`'s table (item collections).
pub const fn same_table<A: Entity, B: Entity<Table = A::Table>>() {}
/// Compiles only when variant `B` reads an entity of `A`'s table (item collections).
pub const fn same_table_variant<A: Variant, B: Variant>()
where
    B::Entity: Entity<Table = <A::Entity as Entity>::Table>,
{
}
pub use crate::model::{
    AttrArg, AttrKind, AttrPrefix, IndexAttribute, IndexDef, KeyAttr, Metric, Table, TenantTable,
    VectorField, VectorIndexDef, find_index, find_vector_index, str_eq,
};
pub use crate::ops::{Nearest, nearest};

// Graph edges (`#[derive(Edge)]`).
pub use crate::edge::{
    CounterRef, Counters, Edge, EdgeSpec, Edges, InverseSpec, OneWay, Templates, edge_counter,
    edge_counter_sharded, symmetric_endpoints,
};
pub use core::option::Option::{self, None, Some};
pub use core::result::Result::{self, Err, Ok};
/// What a generated fallible step returns.
pub type Done = Result<(), Error>;
pub use std::borrow::{Cow, ToOwned};
pub use std::string::String;

/// The table's partition key attribute.
pub const fn table_pk<E: Entity>() -> &'static str {
    <E::Table as Table>::PK
}

/// The table's sort key attribute.
pub const fn table_sk<E: Entity>() -> Option<&'static str> {
    <E::Table as Table>::SK
}

/// The table's expiry attribute (`#[table(ttl = "..")]`).
pub const fn table_ttl<E: Entity>() -> Option<&'static str> {
    <E::Table as Table>::TTL
}

/// The table's tenant literal (`#[table(tenant = "..")]`).
pub const fn table_tenant<E: Entity>() -> Option<&'static str> {
    <E::Table as Table>::TENANT
}

/// The type of a tenant field (`#[entity(tenant = org)]`): a tenant id is text, as
/// [`Db::for_tenant`](crate::Db::for_tenant) takes it.
#[diagnostic::on_unimplemented(
    message = "a tenant field is a `String`, not `{Self}`",
    label = "the field named by `#[entity(tenant = ..)]`",
    note = "the tenant id leads every partition key escaped as text, as `Db::for_tenant` takes it"
)]
pub trait TenantId {}
impl TenantId for String {}

/// Compiles only for a [`TenantId`] type.
pub const fn tenant_field<T: TenantId>() {}

/// The table's index `name`.
pub const fn table_index<E: Entity>(name: &str) -> Option<&'static IndexDef> {
    find_index::<E::Table>(name)
}

/// The table's vector index `name`.
pub const fn table_vector_index<E: Entity>(name: &str) -> Option<&'static VectorIndexDef> {
    find_vector_index::<E::Table>(name)
}

/// Compiles only for a type that holds a vector.
pub const fn vector_field<T: VectorField>() {}

/// What the table uses `attr` for: 0 nothing, 1 partition key, 2 sort key, 3 entity type,
/// 4 an index key.
pub const fn table_attr_role<E: Entity>(attr: &str) -> u8 {
    crate::model::attribute_role::<E::Table>(attr)
}

/// Whether `item` is one of `E`'s items, in one of a collection's two passes: first the
/// entities tagged by an attribute (`keys` false), then those told apart by their keys.
pub fn identifies<E: Entity>(item: &Item, keys: bool) -> bool {
    E::IDENTITY.tag().is_none() == keys && crate::model::is_entity_item::<E>(item)
}

/// The position of the variant whose entity `item` is (`ids` holds each variant's
/// [`identifies`]): a tagged one first, then one told apart by its keys.
pub fn variant_of(item: &Item, ids: &[fn(&Item, bool) -> bool]) -> Option<usize> {
    ids.iter().position(|id| id(item, false)).or_else(|| ids.iter().position(|id| id(item, true)))
}

/// True when `E`'s key templates read the key attributes of `keys`.
pub fn parses_key<E: Entity>(keys: &Item) -> bool {
    let text = |attr: &str| crate::model::string_attr(keys, attr);
    match text(<E::Table as Table>::PK) {
        Some(pk) => E::parse_key(pk, <E::Table as Table>::SK.and_then(text)).is_ok(),
        None => false,
    }
}

/// The typed path of a field that is not an `Option` (`E::FIELD`): its own `None` (a value
/// that serializes to nothing) is `NULL`.
pub const fn field<E: Entity, T, A>(name: &'static str) -> crate::expr::Attr<E, T, A> {
    crate::expr::Attr::new(name).none_as_null(<E::Table as Table>::NONE_AS_NULL, true)
}

/// The typed path of an `Option` field: `set(f, None)` removes the attribute, unless the
/// table stores `None` as `NULL`.
pub const fn optional<E: Entity, T, A>(name: &'static str) -> crate::expr::Attr<E, T, A> {
    crate::expr::Attr::new(name).none_as_null(<E::Table as Table>::NONE_AS_NULL, false)
}

/// The typed path of a field whose `None` is `NULL` (`#[entity(none_as_null)]`, or a field
/// serde could not read back absent).
pub const fn nullable<E: Entity, T, A>(name: &'static str) -> crate::expr::Attr<E, T, A> {
    crate::expr::Attr::new(name).none_as_null(true, false)
}

/// The type attribute of the table of `E`, if it has one.
pub const fn table_type_attr<E: Entity>() -> Option<&'static str> {
    <E::Table as Table>::TYPE_ATTR
}

/// True when `E` is tagged by its table's type attribute: what trees and edges need.
pub const fn tagged_by_table<E: Entity>() -> bool {
    match (<E::Table as Table>::TYPE_ATTR, E::IDENTITY) {
        (Some(attr), Identity::Tagged(tag)) => str_eq(attr, tag.attr),
        _ => false,
    }
}

/// `db.get(key)`.
pub fn db_get<E: Entity>(db: &Db<E::Table>, key: Key<E>) -> Get<'_, E> {
    db.get(key)
}

/// `db.update(key)`.
pub fn db_update<E: Entity>(db: &Db<E::Table>, key: Key<E>) -> Update<'_, E> {
    db.update(key)
}

/// `db.delete(key)`.
pub fn db_delete<E: Entity>(db: &Db<E::Table>, key: Key<E>) -> Delete<'_, E> {
    db.delete(key)
}

/// `db.create(e)`.
pub fn db_create<'a, E: Entity>(db: &'a Db<E::Table>, e: impl Into<Target<'a, E>>) -> Put<'a, E> {
    db.create(e)
}

/// `db.put(e)`.
pub fn db_put<'a, E: Entity>(db: &'a Db<E::Table>, e: impl Into<Target<'a, E>>) -> Put<'a, E> {
    db.put(e)
}

/// `db.replace(e)`.
pub fn db_replace<'a, E: Entity>(db: &'a Db<E::Table>, e: impl Into<Target<'a, E>>) -> Put<'a, E> {
    db.replace(e)
}
