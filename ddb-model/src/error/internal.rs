//! [`InternalProblem`]: a failure that is a bug, not a problem of the input, the stored data
//! or the service (in [`Error::Internal`](super::Error::Internal)).

/// A request the library made that it could not send: a bug of ddb-model (or a model the
/// derive would refuse, implemented by hand). Carried by
/// [`Error::Internal`](super::Error::Internal); nothing was sent. Please report it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum InternalProblem {
    /// An SDK builder refused a request part the library built (a required field missing).
    #[error("an SDK builder refused a request: {0}")]
    Build(aws_sdk_dynamodb::error::BuildError),
    /// A tree whose table (closure) or index (adjacency) has no sort key.
    #[error("the tree of `{entity}` needs a sort key, in its table or its index")]
    NoSortKey {
        /// The node entity.
        entity: &'static str,
    },
    /// An item the library rendered (a tree's bookkeeping row) has no key of the table.
    #[error("a row of `{entity}` has no key of this table")]
    RowWithoutKey {
        /// The entity the row belongs to.
        entity: &'static str,
    },
    /// A transaction rebuilt for a retry has an action that reads first (only unique
    /// constraints defer, and no layer that rebuilds has them).
    #[error("a transaction rebuilt for a retry cannot read first")]
    DeferredRebuild,
    /// A dry run ended the operation at a read after a withheld write (never returned by a
    /// dry run: it hands back what it withheld).
    #[error("a dry run ended the operation here")]
    DryRunEnded,
    /// The AWS Database Encryption SDK, which computes synchronously, left an item's
    /// encryption or decryption pending.
    #[error("the encryption SDK did not finish an item at once")]
    EncryptionPending,
}

impl super::Error {
    /// The error of an SDK builder that refused a request part the library built.
    pub(crate) fn build(e: aws_sdk_dynamodb::error::BuildError) -> super::Error {
        super::Error::Internal { problem: InternalProblem::Build(e) }
    }
}
