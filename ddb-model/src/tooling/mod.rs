//! The model as data, for people and tools (feature `tooling`): a [`TableModel`] built from
//! the derives lists each entity's key templates, index keys, stored fields, vector fields,
//! tree, edge, unique constraints, expiry field and schema version, the table's vector
//! indexes, and the access patterns the derives generate with the requests each sends. It
//! prints as a Mermaid diagram ([`TableModel::mermaid`]), a Markdown access-pattern table
//! ([`TableModel::markdown`]) and a NoSQL Workbench data model
//! ([`TableModel::workbench_json`]), and a table with tenants exports the IAM policy that
//! confines a principal to its tenant ([`TableModel::tenant_policy`]); [`cli`] makes it a
//! command-line tool in the user's crate.
//!
//! Everything is read from what the derive wrote (`Entity::SHAPE`), never guessed from names.
//! The Markdown has a row for every access method generated (one per sort-key level of each
//! access path; see [`AccessPattern`]), an edge's too ([`TableModel::edge`]); an item
//! collection (`.collection::<C>()`) is read through a `partition` or `query` row.
//!
//! Each entity names its table, not the other way round, so the model lists them:
//!
//! ```
//! use ddb_model::tooling::TableModel;
//! use ddb_model::{Entity, Table};
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Table)]
//! #[table(name = "app", gsi(name = "gsi1", pk = "gsi1pk", sk = "gsi1sk"))]
//! struct App;
//!
//! #[derive(Entity, Serialize, Deserialize)]
//! #[entity(table = App, pk = "USER#<id>", sk = "PROFILE")]
//! #[index(gsi1, pk = "ORG#<org>", sk = "USER#<name>")]
//! struct User { id: String, org: String, name: String, #[unique] email: String }
//!
//! let model = TableModel::of::<App>().entity::<User>();
//! let user = &model.entities[0];
//! assert_eq!((user.shape.pk.as_str(), user.shape.sk.as_deref()), ("USER#<id>", Some("PROFILE")));
//! assert!(model.markdown().contains("| User | gsi1: by name | `User::query_gsi1(&db, org).name(..)` |"));
//! assert!(model.mermaid().starts_with("erDiagram"));
//!
//! // The sentinel item of each unique constraint, keyed as the runtime keys it.
//! let sentinels = model.unique_sentinels(user);
//! assert_eq!(sentinels[0].sentinel_pk, "_unique#User.email#<email>");
//! assert_eq!((sentinels[0].sentinel_sk, sentinels[0].type_name.as_str()), (Some("_unique"), "User:unique"));
//! assert!(model.markdown().contains("| User | create | `user.create(&db)` | `pk = USER#<id>, sk = PROFILE` | table | 1 TransactWriteItems"));
//! ```
//!
//! The request counts are the ones the library's request report checks (`cargo run --example
//! report`): a pattern's cost is stated only where it does not depend on the data ("1 Query
//! per page"), and with the shape it depends on otherwise ("1 GetItem per level").

pub mod aggregate;
pub mod cli;
mod patterns;
mod policy;
pub mod rekey;
mod render;
mod workbench;

use aws_sdk_dynamodb::Client;

use crate::db::Db;
use crate::edge::{Edge, InverseSpec};
use crate::error::Error;
use crate::model::{Entity, EntityShape, IndexDef, Table, UniqueDef, VectorIndexDef};
use crate::ops::transact::{OWNER_PK, OWNER_SK};
use crate::ops::unique::{SENTINEL_PREFIX, SENTINEL_SK, SENTINEL_TYPE_SUFFIX};
use crate::ops::{BoxFuture, TableDiff};

pub use patterns::AccessPattern;
pub use policy::{PolicyTarget, TABLE_ACTIONS};
pub use workbench::workbench_date;

/// A table and the entities stored in it, as data. Build it with [`TableModel::of`] and one
/// [`entity`](TableModel::entity) or [`edge`](TableModel::edge) call per entity type.
#[derive(Debug, Clone)]
pub struct TableModel {
    /// The table's name as declared (`#[table(name = ..)]`).
    pub name: &'static str,
    /// The partition-key attribute.
    pub pk: &'static str,
    /// The sort-key attribute, if any.
    pub sk: Option<&'static str>,
    /// The entity-type attribute, if any.
    pub type_attr: Option<&'static str>,
    /// The global secondary indexes.
    pub indexes: &'static [IndexDef],
    /// The vector indexes (`#[table(vector(..))]`).
    pub vector_indexes: &'static [VectorIndexDef],
    /// The attribute holding items' expiry times (Time to Live), if any.
    pub ttl: Option<&'static str>,
    /// The attribute holding the schema version of entities that declare one.
    pub schema_attr: &'static str,
    /// The literal before the tenant id in tenants' partition keys (`#[table(tenant = ..)]`),
    /// if the table has tenants; [`tenant_policy`](TableModel::tenant_policy) exports the
    /// IAM policy that confines a principal to its tenant.
    pub tenant: Option<&'static str>,
    /// The entities, in the order they were added.
    pub entities: Vec<EntityModel>,
    create: CreateFn,
    sync: SyncFn,
}

type CreateFn =
    fn(Client, String, crate::ops::TableOptions) -> BoxFuture<'static, Result<(), Error>>;
type SyncFn = fn(Client, String, SyncRequest) -> BoxFuture<'static, Result<TableDiff, Error>>;

/// What [`TableModel::sync_table`] compares and does (see [`Db::sync_table`]).
#[derive(Debug, Clone, Default)]
pub struct SyncRequest {
    /// The settings to compare besides the layout.
    pub options: crate::ops::TableOptions,
    /// Apply the differences rather than only report them.
    pub apply: bool,
    /// Delete the global secondary indexes the declaration lacks.
    pub delete_undeclared_indexes: bool,
}

/// One entity type of a [`TableModel`].
#[derive(Debug, Clone)]
pub struct EntityModel {
    /// The entity type (its `NAME`).
    pub name: &'static str,
    /// The declaration: key templates, index keys, stored fields, tree.
    pub shape: EntityShape,
    /// The version attribute (optimistic locking), if any.
    pub version: Option<&'static str>,
    /// The constant attributes every item of the entity holds (`#[entity(constant(..))]`).
    pub constants: &'static [crate::model::TypeTag],
    /// The edge the entity is, if added with [`TableModel::edge`].
    pub edge: Option<EdgeModel>,
    /// The unique constraints (`#[unique]`), each kept by a sentinel item
    /// ([`UniqueModel::sentinel_pk`]).
    pub uniques: &'static [UniqueDef],
    /// The attribute of the expiry field (`#[entity(ttl = ..)]`), which is the table's
    /// [`ttl`](TableModel::ttl) attribute, if the entity has one.
    pub ttl: Option<&'static str>,
    /// The schema version its writes store (`#[entity(schema = ..)]`), if it declares one.
    pub schema: Option<u32>,
    /// The vector indexes of the table that the entity's `#[vector(..)]` fields
    /// ([`EntityShape::vectors`]) are stored in: the ones its `nearest` searches.
    pub vector_indexes: Vec<&'static VectorIndexDef>,
    /// The access patterns the derives generate for it, with their requests.
    pub patterns: Vec<AccessPattern>,
}

/// The sentinel item of one unique constraint (see [`ops::unique`](crate::ops::unique)):
/// the item that owns a value, in a partition of its own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UniqueModel {
    /// The constraint.
    pub def: UniqueDef,
    /// The sentinel's entity type (`User:unique`), which no entity reads.
    pub type_name: String,
    /// Its partition-key template: `_unique#<scope, escaped>#<value>`, the value being the
    /// constrained fields' key texts joined by `#` (`_unique#User.email#<email>`).
    pub sentinel_pk: String,
    /// Its sort key (`_unique`), on a table with one.
    pub sentinel_sk: Option<&'static str>,
    /// The attributes holding the owner's key.
    pub owner_attrs: [&'static str; 2],
}

impl UniqueModel {
    fn new(entity: &str, def: &UniqueDef, table_has_sk: bool) -> UniqueModel {
        let mut pk = String::from(SENTINEL_PREFIX);
        crate::escape::escape_into(def.scope, &mut pk);
        for attr in def.attrs {
            pk.push_str("#<");
            pk.push_str(attr);
            pk.push('>');
        }
        UniqueModel {
            def: *def,
            type_name: format!("{entity}{SENTINEL_TYPE_SUFFIX}"),
            sentinel_pk: pk,
            sentinel_sk: table_has_sk.then_some(SENTINEL_SK),
            owner_attrs: [OWNER_PK, OWNER_SK],
        }
    }
}

/// How an edge entity is stored in its other direction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EdgeModel {
    /// The attribute of the `from` field.
    pub from_attr: &'static str,
    /// The attribute of the `to` field.
    pub to_attr: &'static str,
    /// The inverse.
    pub inverse: Inverse,
}

/// An edge's other direction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Inverse {
    /// Inverse items of entity type `name` under the keys `pk` / `sk`, written in the same
    /// transaction.
    Items {
        /// The inverse items' entity type.
        name: &'static str,
        /// Their partition-key template.
        pk: &'static str,
        /// Their sort-key template.
        sk: &'static str,
    },
    /// The edge items read through an index that inverts their keys.
    Index {
        /// The index.
        index: &'static str,
        /// The index partition-key template.
        pk: &'static str,
        /// The index sort-key template.
        sk: &'static str,
    },
    /// A mirrored item per edge (a symmetric edge).
    Symmetric,
    /// None: found only from the `from` node.
    None,
}

fn create_table<T: Table>(
    client: Client,
    name: String,
    options: crate::ops::TableOptions,
) -> BoxFuture<'static, Result<(), Error>> {
    Box::pin(
        async move { Db::<T>::with_table_name(client, name).create_table().options(options).await },
    )
}

fn sync_table<T: Table>(
    client: Client,
    name: String,
    request: SyncRequest,
) -> BoxFuture<'static, Result<TableDiff, Error>> {
    Box::pin(async move {
        let db = Db::<T>::with_table_name(client, name);
        let sync = db
            .sync_table()
            .options(request.options)
            .delete_undeclared_indexes(request.delete_undeclared_indexes);
        if request.apply { sync.apply().await } else { sync.await }
    })
}

impl TableModel {
    /// The model of table `T`, with no entity yet.
    pub fn of<T: Table>() -> TableModel {
        TableModel {
            name: T::NAME,
            pk: T::PK,
            sk: T::SK,
            type_attr: T::TYPE_ATTR,
            indexes: T::INDEXES,
            vector_indexes: T::VECTOR_INDEXES,
            ttl: T::TTL,
            schema_attr: T::SCHEMA_ATTR,
            tenant: T::TENANT,
            entities: Vec::new(),
            create: create_table::<T>,
            sync: sync_table::<T>,
        }
    }

    /// Adds entity `E` (once: a second call changes nothing).
    #[must_use]
    pub fn entity<E: Entity>(mut self) -> TableModel {
        if !self.entities.iter().any(|e| e.name == E::NAME) {
            let shape = EntityShape::parse(E::SHAPE).unwrap_or_default();
            let vector_indexes = E::Table::VECTOR_INDEXES
                .iter()
                .filter(|d| shape.vectors.iter().any(|v| v.index == d.name))
                .collect();
            let mut model = EntityModel {
                name: E::NAME,
                shape,
                version: E::VERSION.map(|v| v.attr),
                constants: E::CONSTANTS,
                edge: None,
                uniques: E::UNIQUES,
                ttl: E::TTL.map(|t| t.attr),
                schema: E::SCHEMA.map(|s| s.version),
                vector_indexes,
                patterns: Vec::new(),
            };
            model.patterns = patterns::of_entity(&model, self.type_attr);
            self.entities.push(model);
        }
        self
    }

    /// Adds edge entity `E` with the access patterns of its edge (link, unlink, reads of
    /// both directions), as an entity if it was not added yet.
    #[must_use]
    pub fn edge<E: Edge>(self) -> TableModel {
        let mut model = self.entity::<E>();
        let spec = E::SPEC;
        let inverse = match spec.inverse {
            InverseSpec::Items { key, name, .. } => {
                Inverse::Items { name, pk: key.pk.text(), sk: key.sk.text() }
            }
            InverseSpec::Index { name, key } => {
                Inverse::Index { index: name, pk: key.pk.text(), sk: key.sk.text() }
            }
            InverseSpec::Symmetric => Inverse::Symmetric,
            InverseSpec::None => Inverse::None,
        };
        if let Some(entity) = model.entities.iter_mut().find(|e| e.name == E::NAME) {
            let edge = EdgeModel { from_attr: spec.attrs.0, to_attr: spec.attrs.1, inverse };
            entity.patterns.extend(patterns::of_edge(entity.name, &edge));
            entity.edge = Some(edge);
        }
        model
    }

    /// The sentinel items of entity `e`'s unique constraints, one per constraint, keyed as
    /// the runtime keys them (see [`ops::unique`](crate::ops::unique)). Example: see the
    /// [module](crate::tooling).
    pub fn unique_sentinels(&self, e: &EntityModel) -> Vec<UniqueModel> {
        e.uniques.iter().map(|def| UniqueModel::new(e.name, def, self.sk.is_some())).collect()
    }

    /// Every access pattern, entity by entity.
    pub fn patterns(&self) -> impl Iterator<Item = (&EntityModel, &AccessPattern)> {
        self.entities.iter().flat_map(|e| e.patterns.iter().map(move |p| (e, p)))
    }

    /// Creates the table as declared, under the physical name `table_name`, with `client`
    /// (see [`Db::create_table`]: idempotent, waits until it is active).
    pub async fn create_table(&self, client: Client, table_name: &str) -> Result<(), Error> {
        self.create_table_with(client, table_name, crate::ops::TableOptions::default()).await
    }

    /// [`create_table`](TableModel::create_table) with table options (deletion protection,
    /// warm throughput, on-demand maxima), which apply when the table is created.
    pub async fn create_table_with(
        &self,
        client: Client,
        table_name: &str,
        options: crate::ops::TableOptions,
    ) -> Result<(), Error> {
        (self.create)(client, table_name.to_owned(), options).await
    }

    /// Compares the table `table_name` with the declaration (and applies the differences
    /// when asked), with `client` (see [`Db::sync_table`]).
    pub async fn sync_table(
        &self,
        client: Client,
        table_name: &str,
        request: SyncRequest,
    ) -> Result<TableDiff, Error> {
        (self.sync)(client, table_name.to_owned(), request).await
    }
}

/// The DynamoDB type (`S`, `N`, `B`, `BOOL`, `L`, `M`) a field of Rust type `rust_type` is
/// stored as, read from the type's text: strings, characters, ids, dates and key-part types
/// are `S`, numbers `N`, `bool` `BOOL`, `Vec<u8>` `B`, sequences and sets `L`, maps `M`, an
/// `Option<T>` as `T`. A type it does not know is `M` (a struct), or `S` when a key template
/// uses the field (a key part, e.g. an enum).
pub fn attribute_type(rust_type: &str, in_key: bool) -> &'static str {
    let mut ty = rust_type.trim();
    while let Some(inner) = generic_arg(ty, "Option").or_else(|| generic_arg(ty, "Box")) {
        ty = inner;
    }
    let base = ty.split('<').next().unwrap_or(ty);
    let last = base.rsplit("::").next().unwrap_or(base).trim_start_matches('&');
    match last {
        "String" | "str" | "char" | "Uuid" | "NaiveDate" | "NaiveDateTime" | "NaiveTime"
        | "DateTime" | "CaseInsensitive" | "Cow" | "TreePath" => "S",
        "u8" | "u16" | "u32" | "u64" | "u128" | "usize" | "i8" | "i16" | "i32" | "i64" | "i128"
        | "isize" | "f32" | "f64" => "N",
        _ if last.starts_with("NonZero") => "N",
        "bool" => "BOOL",
        "Vec" if generic_arg(ty, "Vec") == Some("u8") => "B",
        "Bytes" | "ByteBuf" => "B",
        "Vec" | "VecDeque" | "HashSet" | "BTreeSet" | "LinkedList" => "L",
        _ if ty.starts_with('[') || ty.starts_with('(') => "L",
        "HashMap" | "BTreeMap" => "M",
        _ if in_key => "S",
        _ => "M",
    }
}

/// `T` in `Name<T>`, if `ty` is one.
fn generic_arg<'t>(ty: &'t str, name: &str) -> Option<&'t str> {
    let base = ty.split('<').next()?;
    if base.rsplit("::").next()? != name {
        return None;
    }
    ty.get(base.len() + 1..)?.strip_suffix('>').map(str::trim)
}

/// The placeholders of a template text (`"USER#<id>#<seq:verbatim>"` -> `id`, `seq`).
pub(crate) fn placeholders(template: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = template;
    while let Some(start) = rest.find('<') {
        let Some(end) = rest[start..].find('>') else { break };
        let inner = &rest[start + 1..start + end];
        out.push(inner.split(':').next().unwrap_or(inner));
        rest = &rest[start + end + 1..];
    }
    out
}

/// The literal text of a template before its first placeholder.
pub(crate) fn literal_prefix(template: &str) -> &str {
    template.split('<').next().unwrap_or(template)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attribute_types() {
        for (ty, key, want) in [
            ("String", false, "S"),
            ("Option<String>", false, "S"),
            ("Option<Box<u64>>", false, "N"),
            ("std::num::NonZeroU32", false, "N"),
            ("bool", false, "BOOL"),
            ("Vec<u8>", false, "B"),
            ("Vec<String>", false, "L"),
            ("BTreeSet<u32>", false, "L"),
            ("(u32, String)", false, "L"),
            ("HashMap<String, u64>", false, "M"),
            ("chrono::DateTime<chrono::Utc>", false, "S"),
            ("Status", true, "S"),
            ("Address", false, "M"),
        ] {
            assert_eq!(attribute_type(ty, key), want, "{ty}");
        }
    }

    #[test]
    fn template_texts() {
        assert_eq!(placeholders("USER#<id>#<seq:verbatim>x"), ["id", "seq"]);
        assert_eq!(placeholders("PROFILE"), Vec::<&str>::new());
        assert_eq!(literal_prefix("ORDER#<seq>"), "ORDER#");
        assert_eq!(literal_prefix("<id>"), "");
    }
}
