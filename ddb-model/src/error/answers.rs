//! What an [`Error`] answers about the failure: which kind it is (`is_*`), and the tree
//! problem it carries.

use super::*;
use TreeProblem as P;

/// `pub fn $name(&self) -> bool`: true when the error matches `$pat` (`P` is [`TreeProblem`])
/// or, when `$canceled`, when the condition error of an action of a canceled transaction does.
macro_rules! predicates {
    ($canceled:literal => $($(#[$doc:meta])* $name:ident: $pat:pat,)*) => {
        impl Error {
            $($(#[$doc])* pub fn $name(&self) -> bool {
                matches!(self, $pat) || ($canceled && self.condition_errors().any(Error::$name))
            })*
        }
    };
}

predicates! { false =>
    /// True for a re-key run that another runner took over ([`RekeyProblem::Superseded`]):
    /// its last transaction wrote nothing.
    is_rekey_superseded: Error::Rekey { problem: crate::error::RekeyProblem::Superseded { .. }, .. },
    /// True for a tree operation refused because another large operation (a move, rename or
    /// delete of a subtree) is in progress ([`TreeProblem::Busy`]):
    /// wait and try again, or finish an interrupted one with `resume`.
    is_tree_busy: Error::Tree { problem: P::Busy { .. }, .. },
    /// True for a tree insert or move whose parent (or destination parent) does not exist
    /// (`TreeProblem::ParentMissing`, `TreeProblem::NoParent`).
    is_parent_missing: Error::Tree { problem: P::ParentMissing { .. } | P::NoParent { .. }, .. },
    /// True for a tree move or delete of a node that does not exist
    /// (`TreeProblem::NodeMissing`, `TreeProblem::NoNode`).
    is_node_missing: Error::Tree { problem: P::NodeMissing { .. } | P::NoNode { .. }, .. },
    /// True for a tree move whose destination exists already
    /// (`TreeProblem::DestinationExists`).
    is_destination_exists: Error::Tree { problem: P::DestinationExists { .. }, .. },
    /// True for a tree move into the node's own subtree (`TreeProblem::IntoOwnSubtree`,
    /// `TreeProblem::Cycle`).
    is_tree_cycle: Error::Tree { problem: P::IntoOwnSubtree { .. } | P::Cycle { .. }, .. },
    /// True for a tree operation that gave up because the subtree kept changing under it
    /// (`TreeProblem::Changed`, `TreeProblem::NodeChanged`, and a move's
    /// `TreeProblem::Contended`, see [`is_tree_contended`](Error::is_tree_contended)); nothing
    /// was written, and trying again later may succeed.
    is_tree_changed: Error::Tree {
        problem: P::Changed { .. } | P::NodeChanged { .. } | P::Contended { .. }, ..
    },
    /// True for a move of a small subtree that gave up because concurrent writes kept
    /// canceling its transaction (`TreeProblem::Contended`): it was tried a bounded number
    /// of times, with exponential backoff and jitter between tries, and wrote nothing.
    is_tree_contended: Error::Tree { problem: P::Contended { .. }, .. },
    /// True for a node that would be deeper than the tree allows (`TreeProblem::TooDeep`, or
    /// a path over the tree's `max_depth`).
    is_tree_too_deep: Error::Tree {
        problem: P::TooDeep { .. } | P::Path { problem: PathProblem::TooDeep { .. }, .. }, ..
    },
    /// True when a strict entity's item (`#[entity(strict)]`) holds attributes the entity
    /// does not declare ([`CorruptReason::UnknownAttributes`]).
    is_unknown_attributes: Error::CorruptItem { reason: CorruptReason::UnknownAttributes { .. }, .. },
    /// True for [`Error::InvalidStreamRecord`]: a stream record that no DynamoDB stream
    /// writes (see [`stream`](crate::stream)).
    is_invalid_stream_record: Error::InvalidStreamRecord { .. },
    /// True for [`Error::Aggregate`]: a stream-maintained aggregate or copy refused its declaration,
    /// a record or one of its own items (see [`stream::aggregate`](crate::stream::aggregate)).
    is_aggregate_problem: Error::Aggregate { .. },
    /// True for [`Error::VectorIndexBackfilling`]: the vector index refuses searches until it
    /// is built.
    is_vector_index_backfilling: Error::VectorIndexBackfilling { .. },
    /// True for [`Error::Unsupported`] of vector search: the endpoint has no vector search
    /// (DynamoDB Local).
    is_vector_search_unsupported: Error::Unsupported { capability: Capability::VectorSearch, .. },
    /// True for [`Error::Unsupported`]: the endpoint lacks an operation (of any
    /// [`Capability`]).
    is_unsupported: Error::Unsupported { .. },
    /// True for [`Error::OutsideTenant`]: a tenant-scoped handle refused a request that would
    /// reach outside its tenant's partitions (see [`TenantProblem`]).
    is_outside_tenant: Error::OutsideTenant { .. },
    /// True when a write met a concurrent write to the same item in another Region of a
    /// multi-Region strongly consistent table ([`Error::ReplicatedWriteConflict`]).
    is_replicated_write_conflict: Error::ReplicatedWriteConflict { .. },    /// True when a condition an interceptor added to a write failed
    /// ([`Error::AddedConditionFailed`]), not the library's own guard or the caller's
    /// condition.
    is_added_condition_failed: Error::AddedConditionFailed { .. },
}

predicates! { true =>
    /// True when a unique constraint refused the write ([`Error::Unique`]), alone or as the
    /// reason of an action of a canceled transaction.
    ///
    /// ```
    /// # use ddb_model::prelude::*;
    /// # use serde::{Deserialize, Serialize};
    /// # #[derive(Entity, Serialize, Deserialize)]
    /// # #[entity(pk = "USER#<id>", sk = "PROFILE")]
    /// # struct User { id: String, #[unique] email: String }
    /// # #[cfg(feature = "local")]
    /// # #[tokio::main]
    /// # async fn main() -> Result<(), Error> {
    /// # let db = ddb_model::local::isolated_db::<ddb_model::DefaultTable>().await?;
    /// User { id: "ann".into(), email: "a@example.com".into() }.create(&db).await?;
    /// let err = User { id: "bob".into(), email: "a@example.com".into() }
    ///     .create(&db)
    ///     .await
    ///     .unwrap_err();
    /// assert!(err.is_unique_violation());
    /// assert!(matches!(err, Error::Unique { field: "email", .. }));
    /// # Ok(())
    /// # }
    /// # #[cfg(not(feature = "local"))]
    /// # fn main() {}
    /// ```
    is_unique_violation: Error::Unique { .. },
    /// True only when the caller's own condition did not hold: the
    /// [`condition`](crate::ops::Update::condition) of a write, or of a transaction action
    /// ([`Error::ConditionFailed`], also inside [`Error::TransactionCanceled`]). The checks
    /// the library adds never make it true: a missing item is [`Error::NotFound`] (even when
    /// the caller's condition would have failed too), an existing one
    /// [`Error::AlreadyExists`], another version [`Error::VersionConflict`], another entity
    /// type [`Error::WrongEntityType`]. So a loop that retries while its own condition fails
    /// ends when the item is deleted:
    ///
    /// ```
    /// # use ddb_model::prelude::*;
    /// # use serde::{Deserialize, Serialize};
    /// # #[derive(Entity, Serialize, Deserialize, Debug)]
    /// # #[entity(pk = "JOB#<id>", sk = "JOB")]
    /// # struct Job { id: String, state: String }
    /// /// Claims a job once it is ready; `Ok(false)` when the job is gone.
    /// async fn claim(db: &Db, id: &str) -> Result<bool, Error> {
    ///     loop {
    ///         let claimed = Job::update(db, id)
    ///             .set(Job::STATE, "claimed")
    ///             .condition(Job::STATE.eq("ready"))
    ///             .no_return()
    ///             .await;
    ///         match claimed {
    ///             Ok(()) => return Ok(true),
    ///             Err(e) if e.is_own_condition_failed() => {
    ///                 tokio::time::sleep(std::time::Duration::from_millis(10)).await
    ///             }
    ///             Err(e) if e.is_not_found() => return Ok(false),
    ///             Err(e) => return Err(e),
    ///         }
    ///     }
    /// }
    /// # #[cfg(feature = "local")]
    /// # #[tokio::main]
    /// # async fn main() -> Result<(), Error> {
    /// # let db = ddb_model::local::isolated_db::<ddb_model::DefaultTable>().await?;
    /// Job { id: "j".into(), state: "waiting".into() }.create(&db).await?;
    /// let err = Job::update(&db, "j").set(Job::STATE, "claimed")
    ///     .condition(Job::STATE.eq("ready")).await.unwrap_err();
    /// assert!(err.is_own_condition_failed() && err.is_condition_failed());
    /// Job::delete(&db, "j").await?;
    /// assert!(!claim(&db, "j").await?); // ends: the job is gone
    /// # Ok(())
    /// # }
    /// # #[cfg(not(feature = "local"))]
    /// # fn main() {}
    /// ```
    is_own_condition_failed: Error::ConditionFailed { .. },
    /// True for [`Error::AlreadyExists`], for a transaction canceled because an action
    /// found an item where it required none, and for a tree bulk load that names a node
    /// twice or a node the tree has (`TreeProblem::Duplicate`).
    is_already_exists:
        Error::AlreadyExists { .. } | Error::Tree { problem: P::Duplicate { .. }, .. },
    /// True for [`Error::NotFound`], and for a transaction canceled because an action found
    /// no item where it required one.
    is_not_found: Error::NotFound { .. },
    /// True for [`Error::VersionConflict`], and for a transaction canceled because of a
    /// version conflict on one of its actions.
    is_version_conflict: Error::VersionConflict { .. },
    /// True for the errors of schema versions ([`Error::SchemaTooNew`],
    /// [`Error::SchemaUpgrade`], [`Error::SchemaOutdated`]), also when a transaction was
    /// canceled because an action met an outdated item.
    is_schema_error:
        Error::SchemaTooNew { .. } | Error::SchemaUpgrade { .. } | Error::SchemaOutdated { .. },
}

impl Error {
    /// True when a condition of a write did not hold: [`Error::ConditionFailed`],
    /// [`Error::AlreadyExists`], [`Error::NotFound`] or [`Error::VersionConflict`] (and a
    /// service `ConditionalCheckFailedException` that was not mapped to one of them), or a
    /// transaction canceled because a condition of one of its actions did not hold.
    ///
    /// To retry when the caller's own condition failed, use
    /// [`is_own_condition_failed`](Error::is_own_condition_failed): this one is also true
    /// once the item is gone.
    pub fn is_condition_failed(&self) -> bool {
        match self {
            Error::ConditionFailed { .. }
            | Error::AlreadyExists { .. }
            | Error::NotFound { .. }
            | Error::VersionConflict { .. } => true,
            Error::Sdk { source, .. } => {
                matches!(**source, aws_sdk_dynamodb::Error::ConditionalCheckFailedException(_))
            }
            _ => self.condition_errors().any(Error::is_condition_failed),
        }
    }

    /// What is wrong with a refused tree operation: the problem of an [`Error::Tree`],
    /// `None` for every other error. The one way to ask about tree problems; the `is_tree_*`,
    /// `is_parent_missing`, `is_node_missing` and `is_destination_exists` predicates are
    /// shorthands for matching on it.
    ///
    /// ```
    /// use ddb_model::{Error, tree::TreeProblem};
    ///
    /// fn advice(err: &Error) -> &'static str {
    ///     match err.tree_problem() {
    ///         Some(TreeProblem::Busy { .. }) => "wait, or resume the interrupted operation",
    ///         Some(TreeProblem::ParentMissing { .. } | TreeProblem::NoParent { .. }) => {
    ///             "create the parent first"
    ///         }
    ///         Some(_) => "see the problem",
    ///         None => "not a tree problem",
    ///     }
    /// }
    /// let err = Error::Tree { entity: "Dir", problem: TreeProblem::NoParent { parent: "a".into() } };
    /// assert_eq!(advice(&err), "create the parent first");
    /// assert!(err.is_parent_missing());
    /// ```
    pub fn tree_problem(&self) -> Option<&TreeProblem> {
        match self {
            Error::Tree { problem, .. } => Some(problem),
            _ => None,
        }
    }

    /// True when an entity's validation (`#[entity(validate = ..)]`) refused a value before
    /// writing it ([`HookProblem::Invalid`]), alone or as an action of a transaction: nothing
    /// was sent. [`validation_error`](Error::validation_error) is the validation's error.
    pub fn is_invalid_entity(&self) -> bool {
        self.validation_error().is_some()
    }

    /// The error an entity's validation (`#[entity(validate = ..)]`) refused a value with,
    /// alone or as an action of a transaction (downcast it to its type with
    /// `downcast_ref`).
    pub fn validation_error(&self) -> Option<&(dyn std::error::Error + Send + Sync + 'static)> {
        match self {
            Error::Hook { problem: HookProblem::Invalid { source }, .. } => Some(source.as_ref()),
            Error::InvalidAction { source, .. } => source.validation_error(),
            _ => None,
        }
    }

    /// True when the input was rejected before anything was sent (key, size, serialisation,
    /// expression errors, transaction limits; also [`Error::Internal`], where nothing was
    /// sent either).
    pub fn is_invalid_input(&self) -> bool {
        matches!(
            self,
            Error::InvalidKey { .. }
                | Error::ItemTooLarge { .. }
                | Error::AttributeCollision { .. }
                | Error::Serialize { .. }
                | Error::KeyParse { .. }
                | Error::Internal { .. }
                | Error::InvalidCursor { .. }
                | Error::DuplicateBatchKey { .. }
                | Error::VersionedBatchPut { .. }
                | Error::InvalidTransaction { .. }
                | Error::InvalidAction { .. }
                | Error::InvalidPath(_)
                | Error::InvalidRequest { .. }
                | Error::InvalidVector { .. }
                | Error::OutsideTenant { .. }
                | Error::Hook { problem: HookProblem::Invalid { .. }, .. }
        ) || matches!(self, Error::Tree { problem, .. } if problem.is_invalid_input())
    }
}
