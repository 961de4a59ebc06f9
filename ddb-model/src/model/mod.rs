//! The model layer: how a Rust struct is stored. [`Table`] describes the physical table (key
//! attributes, indexes, entity-type attribute), [`Entity`] a struct stored in it (keys,
//! version field), and the codec converts between entities and raw items.
//!
//! The model knows nothing of trees or edges. Layers built on entities keep their own
//! attributes on the items through one extension point, `Entity::BOOKKEEPING_ATTRS` (filled
//! by `#[hierarchy]`), which reads strip before deserializing. Public as `ddb_model::entity`,
//! the traits and `DefaultTable` also at the crate root.

mod codec;
mod crypto;
mod entity;
mod expiry;
mod generated;
mod index_attr;
#[cfg(feature = "chrono")]
mod iso8601;
mod rekey;
mod rules;
mod schema;
mod shape;
mod stamp;
mod table;
mod unique;
mod vector;

pub use crate::error::RekeyPhase;
pub use crate::expr::Expiry;
pub use codec::{from_item, to_item};
pub use crypto::{Crypto, CryptoField, SDK_ATTRS, is_sealed};
pub(crate) use crypto::{refuse_sealed, refused, unsupported};
pub use entity::{Entity, Identity, TypeTag, VersionDef, VersionField, version_fns};
pub use expiry::{ExpiryField, MAX_EXPIRY_SECS, TtlDef, TtlFns, ttl_fns};
pub use generated::{GeneratedField, GeneratedFns, IdKind, generated_fns};
pub use index_attr::{AttrArg, AttrPrefix, IndexAttribute, TextAttribute};
#[cfg(feature = "chrono")]
pub use iso8601::{Iso8601, IsoMicros, IsoMillis, IsoNanos, IsoSeconds};
pub use rekey::{RekeyCopies, RekeyDef, any_rekeyed, rekey_copies};
pub use schema::{SchemaDef, UNVERSIONED, UpgradeFn};
pub use shape::{
    AttrShape, EntityShape, FieldShape, IndexShape, MultiIndexShape, TreeShape, VectorShape,
};
pub use stamp::{Stamp, TimestampField, TimestampsDef, stamp_now, stamp_value, stamped};
pub use table::{
    AttrKind, DefaultTable, IndexDef, KeyAttr, MAX_VECTOR_DIMS, Metric, Table, TenantTable,
    VectorIndexDef, find_index, find_vector_index, str_eq,
};
pub use unique::{UniqueDef, UniqueField, UniqueText};
pub use vector::VectorField;
pub(crate) use vector::{check_filter_value, check_vector, check_vector_value};

pub(crate) use crate::error::key_display;
pub(crate) use codec::{
    MARKER_PREFIX, identify, is_entity_item, is_entity_type_item, stored_key, string_attr,
    strip_bookkeeping, strip_constants, strip_identity, strip_markers,
};
pub(crate) use codec::{entity_fields, from_opened_item, to_item_at, to_item_keyed, to_item_with};
pub(crate) use expiry::{is_expired, now_secs};
pub(crate) use index_attr::{
    check_index_value, compare as compare_key_values, is_empty_key_value, key_value_len,
    multi_index_attrs,
};
#[doc(hidden)]
pub use rules::{ValidateFn, hook_error};
pub(crate) use rules::{after_read_copy, validate};
pub(crate) use schema::{schema_attr_value, stored_version};
pub(crate) use stamp::{Clock, system_clock};
pub(crate) use table::attribute_role;
pub(crate) use table::type_attr;
