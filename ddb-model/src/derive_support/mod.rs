//! What generated code calls instead of inlining it (`#[derive(Entity)]` and the other
//! derives), reached through `ddb_model::__private`, which is [`private`] re-exported:
//!
//! - [`private`]: the one module generated code names, with the helpers that reach an
//!   entity's table (`table_pk`, `table_index`, ...) and the repository calls (`db_get`, ...);
//! - `keys`: an entity's key templates written down as data (`EntityKeys` / `IndexKeys`, over
//!   the template runtime's `KeyTemplate`, in `key`); the runtime builds every key from them,
//!   so the derive emits the templates once instead of a key builder per call site (stored
//!   keys are read back with the template's `KeyReader`, a run at a time, which keeps parsing
//!   as fast as hand-written code);
//! - `messages`: the compile-time messages of the checks that need another type's declaration
//!   (`attr_clash`: a field stored under one of the table's own attributes, ...).
//!
//! The generated level types wrap [`LevelQuery`](crate::ops::LevelQuery).
//!
//! Nothing here allocates beyond what the work needs: a key is written into one `String`
//! sized from its parts.

mod keys;
mod messages;
pub mod private;
