//! What generated code calls instead of inlining it (`#[derive(Entity)]`), reached through
//! `ddb_model::__private`:
//!
//! - [`EntityKeys`] / [`IndexKeys`]: an entity's key templates written down as data (the
//!   template runtime's `KeyTemplate`, in `key`); the runtime builds every key from them, so
//!   the derive emits the templates once instead of a key builder per call site (stored keys
//!   are read back with the template's `KeyReader`, a run at a time, which keeps parsing as
//!   fast as hand-written code);
//! - [`attr_clash`]: the compile-time message for a field stored under one of the table's own
//!   attributes.
//!
//! The generated level types wrap [`LevelQuery`](crate::ops::LevelQuery), re-exported here
//! under its old path.
//!
//! Nothing here allocates beyond what the work needs: a key is written into one `String`
//! sized from its parts.

mod keys;
mod messages;

pub use crate::ops::{Level, LevelArg, LevelQuery};
pub use keys::{
    ComputeArg, ComputeFn, ComputedInput, EntityKeys, IndexChanges, IndexKeys, IndexSink,
    UpdatePart, computed_text, decode, decode_key, field_value, from_field, from_key, index_arg,
    key_arg, update_index_keys,
};
pub use messages::{
    ConstMsg, attr_clash, follow_check, multi_attr_kind_check, multi_attr_name_check,
    multi_index_check, vector_field_check,
};
