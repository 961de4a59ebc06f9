//! [`TenantProblem`]: a request of a tenant-scoped handle that would reach outside the
//! tenant's partitions (in [`Error::OutsideTenant`](super::Error::OutsideTenant)).

use crate::stats::Op;

/// Why a handle scoped to a tenant (`db.for_tenant(..)`) refused a request. Carried by
/// [`Error::OutsideTenant`](super::Error::OutsideTenant); nothing was sent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TenantProblem {
    /// A key of the request (a table or index partition key) lies in another tenant's
    /// partitions, or in no tenant's (an item of an entity that is not tenant-scoped).
    #[error("{operation:?} names `{attribute}` = {value:?}, outside the tenant's partitions")]
    ForeignKey {
        /// The operation that would have sent it.
        operation: Op,
        /// The partition key attribute (of the table or of an index).
        attribute: String,
        /// Its value in the request (empty when the attribute is not a string).
        value: String,
    },
    /// A query was given a cursor whose start key lies outside the tenant's partitions (a
    /// cursor of another tenant's query).
    #[error("the cursor starts at `{attribute}` = {value:?}, outside the tenant's partitions")]
    ForeignCursor {
        /// The partition key attribute.
        attribute: String,
        /// Its value in the cursor.
        value: String,
    },
    /// The request reads partitions by other means than their key (a scan, a migration, a
    /// vector search, a query of a multi-attribute index), so it cannot be confined to the
    /// tenant's partitions.
    #[error("{operation:?}{} cannot be confined to one tenant's partitions", index.as_ref().map_or(String::new(), |i| format!(" of index `{i}`")))]
    Unconfined {
        /// The operation.
        operation: Op,
        /// The index it reads, if any.
        index: Option<String>,
    },
}
