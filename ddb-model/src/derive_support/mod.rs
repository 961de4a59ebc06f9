//! What generated code calls instead of inlining it (`#[derive(Entity)]`), reached through
//! `ddb_model::__private`:
//!
//! - [`EntityKeys`] / [`IndexKeys`]: an entity's key templates written down as data
//!   ([`KeyTemplate`]); one generic writer builds every key from them, so the derive emits
//!   the templates once instead of a key builder per call site (stored keys are read back
//!   with `KeyReader`, a run at a time, which keeps parsing as fast as hand-written code);
//! - [`LevelQuery`]: the state of a query built level by level from a sort-key template. The
//!   generated level types (`StoreQuery<'_, L>`) wrap it and dereference to it, so the methods
//!   that finish a query (`limit`, `all`, `stream`, ...) are written once, here;
//! - [`attr_clash`]: the compile-time message for a field stored under one of the table's own
//!   attributes.
//!
//! Nothing here allocates beyond what the work needs: a key is written into one `String`
//! sized from its parts.

mod keys;
mod levels;
mod messages;

pub use keys::{
    EntityKeys, IndexKeys, IndexSink, KeySeg, KeyTemplate, PartText, index_arg, key_arg, lit, part,
};
pub use levels::{LevelArg, LevelQuery};
pub use messages::{ConstMsg, attr_clash};
