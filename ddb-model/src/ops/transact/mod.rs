//! Transactions: [`Transaction`] (`TransactWriteItems`), guarded writes of any entity types of
//! one table that commit together or not at all, and [`TransactGet`] (`TransactGetItems`), a
//! consistent read of several items at one point in time.
//!
//! Every action of a transaction keeps the guarantees of the single-item write it mirrors
//! (entity type, existence, version, condition), and a canceled transaction says which action
//! failed and why ([`Error::TransactionCanceled`](crate::Error::TransactionCanceled)).

mod get;
mod reason;
mod write;

pub use crate::error::{ActionReason, CancelReason, TransactionProblem};
pub use get::{TransactGet, TransactGetOutput};
pub use write::Transaction;

pub(crate) use reason::{
    ActionInfo, Explain, OWNER_PK, OWNER_SK, UniqueAction, explain, map_cancellation,
};
pub(crate) use write::{Rebuild, info, send_transact_write};

/// Most actions one transaction may hold (DynamoDB's limit).
pub const MAX_TRANSACTION_ACTIONS: usize = 100;

/// Largest aggregate size of the items and keys of one transaction, in bytes (4 MB, DynamoDB's
/// limit).
pub const MAX_TRANSACTION_BYTES: usize = 4 * 1024 * 1024;

/// Longest idempotency token DynamoDB accepts, in characters.
pub const MAX_TOKEN_CHARS: usize = 36;
