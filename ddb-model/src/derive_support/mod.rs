//! What generated code calls instead of inlining it (`#[derive(Entity)]`), reached through
//! `ddb_model::__private`:
//!
//! - [`EntityKeys`] / [`IndexKeys`]: an entity's key templates written down as data
//!   ([`KeyTemplate`]); one generic writer builds every key from them and one generic reader
//!   ([`KeyParser`]) reads stored keys back, so the derive emits the templates once instead
//!   of a key builder per call site;
//! - [`LevelQuery`]: the state of a query built level by level from a sort-key template. The
//!   generated level types (`StoreQuery<'_, L>`) wrap it and dereference to it, so the methods
//!   that finish a query (`limit`, `all`, `stream`, ...) are written once, here;
//! - [`attr_clash`]: the compile-time message for a field stored under one of the table's own
//!   attributes.
//!
//! Nothing here allocates beyond what the work needs: a key is written into one `String`
//! sized from its parts, and reading a key copies nothing but the field values.

mod keys;
mod levels;
mod messages;

pub use keys::{
    EntityKeys, IndexKeys, IndexSink, KeyParser, KeySeg, KeyTemplate, index_arg, key_arg, lit, part,
};
pub use levels::{LevelArg, LevelQuery};
pub use messages::{ConstMsg, attr_clash};
