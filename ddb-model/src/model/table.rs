//! The physical table: its key attributes and secondary indexes. Creating and deleting it
//! are operations (`ops::table`).

/// A global secondary index of a [`Table`].
///
/// Either keyed by one string attribute for its partition key and at most one for its sort
/// key, which entities write from their key templates (`pk_attrs` and `sk_attrs` empty), or
/// a *multi-attribute* index keyed by up to four typed attributes each, which are entities'
/// own fields (`gsi(name = "by_status", pk = ["tenant", "status"], sk = ["priority": N])`).
///
/// A multi-attribute index types its attributes for the whole table: every entity of the
/// table that stores an attribute of one of those names, whether or not it declares the
/// index, must store the declared type. A field of another type under that name (a
/// `created: u64` where the index declares `"created"` a string) has every write refused
/// before sending ([`KeyProblem::WrongType`](crate::error::KeyProblem::WrongType)), since the
/// service would reject the item; rename the field's attribute (`#[serde(rename = ..)]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IndexDef {
    /// The index name.
    pub name: &'static str,
    /// The attribute holding the index partition key (the first one of a multi-attribute
    /// key).
    pub pk: &'static str,
    /// The attribute holding the index sort key, if the index has one (the first one of a
    /// multi-attribute key).
    pub sk: Option<&'static str>,
    /// The partition key attributes of a multi-attribute index, in order; empty for an index
    /// keyed by templates.
    pub pk_attrs: &'static [KeyAttr],
    /// The sort key attributes of a multi-attribute index, in order (empty without a sort
    /// key, and for an index keyed by templates).
    pub sk_attrs: &'static [KeyAttr],
}

impl IndexDef {
    /// An index keyed by one string attribute (and optionally a second one for its sort
    /// key), written by the entities' key templates.
    pub const fn synthetic(
        name: &'static str,
        pk: &'static str,
        sk: Option<&'static str>,
    ) -> IndexDef {
        IndexDef { name, pk, sk, pk_attrs: &[], sk_attrs: &[] }
    }

    /// True for a multi-attribute index: its key attributes are typed fields of the
    /// entities, not key strings written from templates.
    pub const fn is_multi(&self) -> bool {
        !self.pk_attrs.is_empty()
    }
}

/// The DynamoDB type of a key attribute.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AttrKind {
    /// A string.
    S,
    /// A number (compared as a number: 9 < 10).
    N,
    /// A binary value (compared as unsigned bytes).
    B,
}

impl AttrKind {
    /// The type's name in DynamoDB's API (`S`, `N`, `B`).
    pub const fn as_str(self) -> &'static str {
        match self {
            AttrKind::S => "S",
            AttrKind::N => "N",
            AttrKind::B => "B",
        }
    }

    /// True when `value` is of this type.
    pub(crate) fn holds(self, value: &aws_sdk_dynamodb::types::AttributeValue) -> bool {
        use aws_sdk_dynamodb::types::AttributeValue as V;
        matches!(
            (self, value),
            (AttrKind::S, V::S(_)) | (AttrKind::N, V::N(_)) | (AttrKind::B, V::B(_))
        )
    }
}

/// One attribute of a multi-attribute index key: its name and DynamoDB type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyAttr {
    /// The attribute name (the stored name of the entities' field).
    pub name: &'static str,
    /// Its type.
    pub kind: AttrKind,
}

/// How a vector index measures how near two vectors are (its `DistanceFunction`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Metric {
    /// Cosine distance, `1 - cos(a, b)`, from 0 (same direction) to 2 (opposite): lower is
    /// nearer. A zero vector on either side scores 1.
    Cosine,
    /// Euclidean distance, `sqrt(sum((a_i - b_i)^2))` (the distance itself, not its
    /// square): lower is nearer.
    Euclidean,
    /// The dot product: higher is nearer (a similarity, not a distance; may be negative).
    DotProduct,
}

impl Metric {
    /// The name in DynamoDB's API (`COSINE`, `EUCLIDEAN`, `DOT_PRODUCT`).
    pub const fn as_str(self) -> &'static str {
        match self {
            Metric::Cosine => "COSINE",
            Metric::Euclidean => "EUCLIDEAN",
            Metric::DotProduct => "DOT_PRODUCT",
        }
    }

    /// True when a higher score is nearer (the dot product); false for the distances.
    pub const fn higher_is_nearer(self) -> bool {
        matches!(self, Metric::DotProduct)
    }
}

/// The most dimensions a vector index takes.
pub const MAX_VECTOR_DIMS: u32 = 4096;

/// A vector index of a [`Table`]: the attribute holding each item's vector (a list of
/// `dims` 32-bit floats), and how vectors are compared.
///
/// Declared with `#[table(vector(name = "by_embedding", attr = "embedding", dims = 384,
/// metric = cosine))]`; an entity stores its vectors there with `#[vector(by_embedding)]`
/// on a `Vec<f32>` field and searches them with `nearest`. An item without the attribute
/// (a `None`) is not in the index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VectorIndexDef {
    /// The index name.
    pub name: &'static str,
    /// The attribute holding the vectors.
    pub attr: &'static str,
    /// The number of elements of every vector (1 to [`MAX_VECTOR_DIMS`]).
    pub dims: u32,
    /// How vectors are compared.
    pub metric: Metric,
    /// True when the index is partitioned by the table's entity-type attribute (its search
    /// schema's `HASH` element): a search names one entity type and never meets the items of
    /// another. The derive sets it on every table with a type attribute.
    pub by_type: bool,
    /// The attributes a search may filter on by equality (its search schema's
    /// `INLINE_FILTER` elements), with their types.
    pub filters: &'static [KeyAttr],
}

/// The layout of a physical DynamoDB table shared by many entity types.
///
/// Usually derived:
///
/// ```
/// use ddb_model::Table;
///
/// #[derive(Table)]
/// #[table(name = "app", pk = "pk", sk = "sk", gsi(name = "gsi1", pk = "gsi1pk", sk = "gsi1sk"))]
/// struct App;
///
/// assert_eq!(App::NAME, "app");
/// assert_eq!(App::INDEXES[0].pk, "gsi1pk");
///
/// // A multi-attribute index: up to four typed attributes per key (`S` unless `: N` / `: B`),
/// // which are entities' own fields (`#[index(by_status, pk = [tenant, status], sk = [priority])]`).
/// #[derive(Table)]
/// #[table(name = "shop", gsi(name = "by_status", pk = ["tenant", "status"], sk = ["priority": N]))]
/// struct Shop;
///
/// let index = Shop::INDEXES[0];
/// assert!(index.is_multi());
/// assert_eq!(index.pk_attrs.len(), 2);
/// assert_eq!(index.sk_attrs[0].kind, ddb_model::entity::AttrKind::N);
/// ```
///
/// Every attribute of `#[table]` is optional:
///
/// | key | meaning | default |
/// | --- | --- | --- |
/// | `name = "app"` | default physical table name ([`Db::with_table_name`](crate::Db::with_table_name) overrides it) | the struct name |
/// | `pk = "pk"`, `sk = "sk"` | key attribute names | `pk`, `sk` |
/// | `no_sort_key` | the table has a partition key only | |
/// | `type_attr = "_type"` | attribute holding each item's entity type | `_type` |
/// | `no_type_attr` | items carry no entity type: each entity is told apart by its keys (see [`Identity`](crate::entity::Identity)) | |
/// | `schema_attr = "_schema"` | attribute holding the schema version of entities that declare one (see [`SchemaDef`](crate::entity::SchemaDef)) | `_schema` |
/// | `gsi(name = "..", pk = "..", sk = "..")` | a global secondary index (`sk` optional); repeatable | none |
/// | `ttl = "expires"` | the attribute holding expiry times (Time to Live, enabled by [`Db::create_table`](crate::Db::create_table)); entities name their field with `#[entity(ttl = field)]` | none |
/// | `gsi(name = "..", pk = ["a", "b"], sk = ["c": N, "d"])` | a multi-attribute index: up to four typed attributes (`S` unless `: N` or `: B`) for each key, which are the entities' own fields | |
/// | `tenant = "ORG#"` | the literal before the tenant id in every tenant's partition keys ([`TENANT`](Table::TENANT)); entities name their tenant field with `#[entity(tenant = org)]` | none |
/// | `none_as_null` | a `None` in the entities' fields is stored as `NULL` ([`NONE_AS_NULL`](Table::NONE_AS_NULL)); by default the attribute is left out | |
/// | `vector(name = "..", attr = "..", dims = 384, metric = cosine, filters = ["category", "stock": N])` | a vector index ([`VectorIndexDef`]; `metric` is `cosine`, `euclidean` or `dot_product`; `filters` optional, typed as in a multi-attribute key); up to five | none |
///
/// Entities that name no table use [`DefaultTable`]. The name is only a default:
/// [`Db::with_table_name`](crate::Db::with_table_name) picks the physical table at run time.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a table definition",
    label = "`#[entity(table = ..)]` must name a type with `#[derive(ddb_model::Table)]`",
    note = "add `#[derive(ddb_model::Table)]` and a `#[table(..)]` attribute to `{Self}`, or leave `table` out to use `ddb_model::DefaultTable`"
)]
pub trait Table: Send + Sync + 'static {
    /// The default physical table name.
    const NAME: &'static str;
    /// The partition key attribute.
    const PK: &'static str;
    /// The sort key attribute, if the table has one.
    const SK: Option<&'static str>;
    /// The attribute that stores each item's entity type; `None` for a table whose items carry
    /// none (`#[table(no_type_attr)]`), where entities are told apart by their keys.
    const TYPE_ATTR: Option<&'static str>;
    /// The global secondary indexes.
    const INDEXES: &'static [IndexDef];
    /// The attribute that stores the schema version of the items of entities that declare
    /// one (`#[entity(schema = ..)]`); `#[table(schema_attr = "..")]` renames it.
    const SCHEMA_ATTR: &'static str = "_schema";

    /// The vector indexes.
    const VECTOR_INDEXES: &'static [VectorIndexDef] = &[];

    /// The attribute holding items' expiry times (`#[table(ttl = "expires")]`), on which
    /// [`Db::create_table`](crate::Db::create_table) enables the service's Time to Live;
    /// `None` (the default) for a table without one. The service allows one per table, so
    /// every entity with an expiry field (`#[entity(ttl = field)]`) stores it here.
    const TTL: Option<&'static str> = None;

    /// `#[table(tenant = "ORG#")]`: the literal that leads the partition keys of every
    /// tenant's items, right before the tenant id (escaped like any key value); `None` (the
    /// default) for a table without tenants. A tenant's partitions are those whose key is the
    /// literal and the tenant id, alone or followed by a separator (`# / | ~ :`): the ones a
    /// handle scoped to it ([`Db::for_tenant`](crate::Db::for_tenant)) reaches, and the IAM
    /// policy exported by the model tool allows. Entities declare which field is the tenant
    /// with `#[entity(tenant = field)]`; see the guide's `docs/tenants.md`.
    const TENANT: Option<&'static str> = None;

    /// `#[table(none_as_null)]`: a `None` of the entities' fields (at any depth) is stored as
    /// `NULL`, and an update's `set(field, None)` writes `NULL`. `false` (the default): the
    /// attribute (or map member) is left out, and `set(field, None)` removes it; a `None` in a
    /// list stays `NULL` either way. Reads give `None` for both.
    const NONE_AS_NULL: bool = false;
}

/// A [`Table`] with tenants (`#[table(tenant = "ORG#")]`, which implements it): what
/// [`Db::for_tenant`](crate::Db::for_tenant) needs. Its [`TENANT`](Table::TENANT) is `Some`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` declares no tenants",
    label = "`for_tenant` needs a table with `#[table(tenant = \"..\")]`",
    note = "add `tenant = \"ORG#\"` (the literal before the tenant id in partition keys) to `#[table(..)]` of `{Self}`"
)]
pub trait TenantTable: Table {}

/// The table layout used by entities that name no table: `pk`/`sk` keys, the entity type in
/// `_type`, and three global secondary indexes `gsi1`..`gsi3` keyed by `gsiNpk`/`gsiNsk`.
#[derive(Debug, Clone, Copy, Default)]
pub struct DefaultTable;

impl Table for DefaultTable {
    const NAME: &'static str = "ddb-model";
    const PK: &'static str = "pk";
    const SK: Option<&'static str> = Some("sk");
    const TYPE_ATTR: Option<&'static str> = Some("_type");
    const INDEXES: &'static [IndexDef] = &[
        IndexDef::synthetic("gsi1", "gsi1pk", Some("gsi1sk")),
        IndexDef::synthetic("gsi2", "gsi2pk", Some("gsi2sk")),
        IndexDef::synthetic("gsi3", "gsi3pk", Some("gsi3sk")),
    ];
}

/// `a == b` in a const context.
#[doc(hidden)]
pub const fn str_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// The element of `$list` named `$name`, in a const context.
macro_rules! find_named {
    ($list:expr, $name:expr) => {{
        let mut i = 0;
        while i < $list.len() {
            if str_eq($list[i].name, $name) {
                return Some(&$list[i]);
            }
            i += 1;
        }
        None
    }};
}

/// The index named `name` of table `T`, in a const context.
#[doc(hidden)]
pub const fn find_index<T: Table>(name: &str) -> Option<&'static IndexDef> {
    find_named!(T::INDEXES, name)
}

/// The vector index named `name` of table `T`, in a const context.
#[doc(hidden)]
pub const fn find_vector_index<T: Table>(name: &str) -> Option<&'static VectorIndexDef> {
    find_named!(T::VECTOR_INDEXES, name)
}

/// The table's entity-type attribute, or `_type` for a table without one (for the layers
/// that require one, trees and edges, which assert at compile time that there is one).
#[doc(hidden)]
pub(crate) const fn type_attr<T: Table>() -> &'static str {
    match T::TYPE_ATTR {
        Some(attr) => attr,
        None => "_type",
    }
}

/// What table `T` uses `attr` for, in a const context: 0 nothing, 1 partition key, 2 sort
/// key, 3 entity type, 4 a key of one of its indexes written from templates. The attributes
/// of a multi-attribute index are entities' fields: 0.
#[doc(hidden)]
pub(crate) const fn attribute_role<T: Table>(attr: &str) -> u8 {
    /// `other` is `attr`.
    const fn is(attr: &str, other: Option<&str>) -> bool {
        matches!(other, Some(other) if str_eq(attr, other))
    }
    if str_eq(attr, T::PK) {
        return 1;
    }
    if is(attr, T::SK) {
        return 2;
    }
    if is(attr, T::TYPE_ATTR) {
        return 3;
    }
    let mut i = 0;
    while i < T::INDEXES.len() {
        let index = &T::INDEXES[i];
        if !index.is_multi() && (str_eq(attr, index.pk) || is(attr, index.sk)) {
            return 4;
        }
        i += 1;
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn const_helpers() {
        assert!(str_eq("gsi1", "gsi1"));
        assert!(!str_eq("gsi1", "gsi10"));
        assert_eq!(find_index::<DefaultTable>("gsi2").map(|i| i.pk), Some("gsi2pk"));
        assert!(find_index::<DefaultTable>("gsi9").is_none());
        assert_eq!(attribute_role::<DefaultTable>("pk"), 1);
        assert_eq!(attribute_role::<DefaultTable>("sk"), 2);
        assert_eq!(attribute_role::<DefaultTable>("_type"), 3);
        assert_eq!(attribute_role::<DefaultTable>("gsi3sk"), 4);
        assert_eq!(attribute_role::<DefaultTable>("email"), 0);
    }
}
