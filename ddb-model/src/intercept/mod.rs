//! The requests the library sends, as values: [`Request`] (the SDK input of each request,
//! printable as DynamoDB JSON), what a dry run hands back (`dry_run()` on every builder,
//! [`Db::dry_run`](crate::Db::dry_run)), and the [`Interceptor`] a [`Db`](crate::Db) can
//! carry ([`Db::with_interceptor`](crate::Db::with_interceptor)): it sees every request and
//! every response or error, for auditing or metrics, and may add a condition to a write.
//!
//! # What an interceptor can and cannot do
//!
//! An interceptor is given `&Request`, a copy of the request the library built: it can read
//! everything, and change nothing. What it may add goes through [`Additions`], whose only
//! verbs add a condition ([`Additions::condition`] for `PutItem`, `UpdateItem` and
//! `DeleteItem`; [`Additions::action_condition`] for one action of a `TransactWriteItems`).
//! The library ANDs it to its own guard, renaming its placeholders (`#x0`, `:x0`, ...: never
//! one the request already uses), so a hook cannot change a key, an item, an update
//! expression, a token or the library's bookkeeping, and cannot loosen a guard: a condition
//! ANDed to another only refuses more writes. Reads (`GetItem`, `Query`, `Scan`, batch and
//! transactional gets), `BatchWriteItem` (the service takes no conditions there) and table
//! operations take no condition: adding one is [`RequestProblem::ConditionNotApplicable`],
//! and nothing is sent.
//!
//! When a write fails its condition and an interceptor added one, the library asks the
//! service which condition failed: one `TransactWriteItems` of `ConditionCheck`s holding the
//! added conditions alone (it writes nothing). When one of them fails, the error is
//! [`Error::AddedConditionFailed`] (naming the action of a transaction); otherwise the
//! library's own error (`NotFound`, `VersionConflict`, `ConditionFailed`, ...) as without
//! the interceptor.
//!
//! Where it is called: in `ops/retry.rs`, the one place that sends requests, once per request
//! sent (every round of a retried token-carrying write, every round of a batch's
//! unprocessed items, every page of a query), before the request and after its answer. The
//! SDK's own retries of one request are not requests of the library: they are seen once. A
//! dry run does not call the interceptor for the requests it withholds.
//!
//! [`RequestProblem::ConditionNotApplicable`]: crate::error::RequestProblem::ConditionNotApplicable
//! [`Error::AddedConditionFailed`]: crate::Error::AddedConditionFailed

mod added;
mod json;

use aws_sdk_dynamodb::operation::batch_get_item::{BatchGetItemInput, BatchGetItemOutput};
use aws_sdk_dynamodb::operation::batch_write_item::{BatchWriteItemInput, BatchWriteItemOutput};
use aws_sdk_dynamodb::operation::create_table::{CreateTableInput, CreateTableOutput};
use aws_sdk_dynamodb::operation::delete_item::{DeleteItemInput, DeleteItemOutput};
use aws_sdk_dynamodb::operation::delete_resource_policy::{
    DeleteResourcePolicyInput, DeleteResourcePolicyOutput,
};
use aws_sdk_dynamodb::operation::delete_table::{DeleteTableInput, DeleteTableOutput};
use aws_sdk_dynamodb::operation::describe_continuous_backups::{
    DescribeContinuousBackupsInput, DescribeContinuousBackupsOutput,
};
use aws_sdk_dynamodb::operation::describe_table::{DescribeTableInput, DescribeTableOutput};
use aws_sdk_dynamodb::operation::describe_time_to_live::{
    DescribeTimeToLiveInput, DescribeTimeToLiveOutput,
};
use aws_sdk_dynamodb::operation::get_item::{GetItemInput, GetItemOutput};
use aws_sdk_dynamodb::operation::get_resource_policy::{
    GetResourcePolicyInput, GetResourcePolicyOutput,
};
use aws_sdk_dynamodb::operation::list_tags_of_resource::{
    ListTagsOfResourceInput, ListTagsOfResourceOutput,
};
use aws_sdk_dynamodb::operation::put_item::{PutItemInput, PutItemOutput};
use aws_sdk_dynamodb::operation::put_resource_policy::{
    PutResourcePolicyInput, PutResourcePolicyOutput,
};
use aws_sdk_dynamodb::operation::query::{QueryInput, QueryOutput};
use aws_sdk_dynamodb::operation::scan::{ScanInput, ScanOutput};
use aws_sdk_dynamodb::operation::search_vectors::{SearchVectorsInput, SearchVectorsOutput};
use aws_sdk_dynamodb::operation::tag_resource::{TagResourceInput, TagResourceOutput};
use aws_sdk_dynamodb::operation::transact_get_items::{
    TransactGetItemsInput, TransactGetItemsOutput,
};
use aws_sdk_dynamodb::operation::transact_write_items::{
    TransactWriteItemsInput, TransactWriteItemsOutput,
};
use aws_sdk_dynamodb::operation::untag_resource::{UntagResourceInput, UntagResourceOutput};
use aws_sdk_dynamodb::operation::update_continuous_backups::{
    UpdateContinuousBackupsInput, UpdateContinuousBackupsOutput,
};
use aws_sdk_dynamodb::operation::update_item::{UpdateItemInput, UpdateItemOutput};
use aws_sdk_dynamodb::operation::update_table::{UpdateTableInput, UpdateTableOutput};
use aws_sdk_dynamodb::operation::update_time_to_live::{
    UpdateTimeToLiveInput, UpdateTimeToLiveOutput,
};

pub(crate) use added::{Added, Rendered};
pub use added::{AddedCondition, Additions};

use crate::error::Error;
use crate::stats::Op;

/// `Request` and `Reply`, one variant per operation the library sends.
macro_rules! requests {
    ($($op:ident($input:ident, $output:ident)),+ $(,)?) => {
        /// One request the library sends (or, in a dry run, would send): the SDK's input, as
        /// it goes to the service. Printed as DynamoDB JSON, the service's own request body,
        /// by [`to_json`](Request::to_json) (and `Display`).
        #[derive(Debug, Clone, PartialEq)]
        #[non_exhaustive]
        pub enum Request {
            $(#[doc = concat!("`", stringify!($op), "`.")] $op($input),)+
        }

        /// The answer to a [`Request`]: the SDK's output, borrowed.
        #[derive(Debug, Clone, Copy)]
        #[non_exhaustive]
        pub enum Reply<'a> {
            $(#[doc = concat!("`", stringify!($op), "`.")] $op(&'a $output),)+
        }

        impl Request {
            /// The operation.
            pub fn op(&self) -> Op {
                match self {
                    $(Request::$op(_) => Op::$op,)+
                }
            }
        }

        impl Reply<'_> {
            /// The operation.
            pub fn op(&self) -> Op {
                match self {
                    $(Reply::$op(_) => Op::$op,)+
                }
            }
        }

        $(
            impl From<$input> for Request {
                fn from(input: $input) -> Request {
                    Request::$op(input)
                }
            }

            impl<'a> From<&'a $output> for Reply<'a> {
                fn from(output: &'a $output) -> Reply<'a> {
                    Reply::$op(output)
                }
            }
        )+
    };
}

requests!(
    GetItem(GetItemInput, GetItemOutput),
    PutItem(PutItemInput, PutItemOutput),
    UpdateItem(UpdateItemInput, UpdateItemOutput),
    DeleteItem(DeleteItemInput, DeleteItemOutput),
    Query(QueryInput, QueryOutput),
    Scan(ScanInput, ScanOutput),
    BatchGetItem(BatchGetItemInput, BatchGetItemOutput),
    BatchWriteItem(BatchWriteItemInput, BatchWriteItemOutput),
    TransactGetItems(TransactGetItemsInput, TransactGetItemsOutput),
    TransactWriteItems(TransactWriteItemsInput, TransactWriteItemsOutput),
    CreateTable(CreateTableInput, CreateTableOutput),
    DescribeTable(DescribeTableInput, DescribeTableOutput),
    DeleteTable(DeleteTableInput, DeleteTableOutput),
    SearchVectors(SearchVectorsInput, SearchVectorsOutput),
    DescribeTimeToLive(DescribeTimeToLiveInput, DescribeTimeToLiveOutput),
    UpdateTimeToLive(UpdateTimeToLiveInput, UpdateTimeToLiveOutput),
    UpdateTable(UpdateTableInput, UpdateTableOutput),
    DescribeContinuousBackups(DescribeContinuousBackupsInput, DescribeContinuousBackupsOutput),
    UpdateContinuousBackups(UpdateContinuousBackupsInput, UpdateContinuousBackupsOutput),
    ListTagsOfResource(ListTagsOfResourceInput, ListTagsOfResourceOutput),
    TagResource(TagResourceInput, TagResourceOutput),
    UntagResource(UntagResourceInput, UntagResourceOutput),
    GetResourcePolicy(GetResourcePolicyInput, GetResourcePolicyOutput),
    PutResourcePolicy(PutResourcePolicyInput, PutResourcePolicyOutput),
    DeleteResourcePolicy(DeleteResourcePolicyInput, DeleteResourcePolicyOutput),
);

impl Request {
    /// Whether the request only reads (`GetItem`, `Query`, `Scan`, `BatchGetItem`,
    /// `TransactGetItems`, `SearchVectors`, `DescribeTable`, `DescribeTimeToLive`).
    pub fn is_read(&self) -> bool {
        is_read(self.op())
    }

    /// The request as DynamoDB JSON: the body the service's API takes
    /// (`{"TableName": "app", "Key": {"PK": {"S": "USER#ann"}}, ...}`), names sorted, fields
    /// the request leaves unset left out.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// [`to_json`](Request::to_json), indented.
    pub fn to_json_pretty(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }
}

impl std::fmt::Display for Request {
    /// `Op {json}`: the operation and its DynamoDB JSON.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.op().name(), self.to_json())
    }
}

/// Whether requests of `op` only read.
pub(crate) fn is_read(op: Op) -> bool {
    !op.is_write()
}

/// How a request ended, as an [`Interceptor`] sees it.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub enum Outcome<'a> {
    /// The service answered.
    Answered(Reply<'a>),
    /// The service refused the request (a failed condition, a canceled transaction,
    /// throttling, ...): its error, before the library maps it to an [`Error`].
    Refused(&'a aws_sdk_dynamodb::Error),
    /// The request failed before the service answered (the transport failed, or the
    /// interceptor's addition was refused before sending).
    Failed(&'a Error),
}

/// A hook a [`Db`](crate::Db) calls for every request it sends and every answer
/// ([`Db::with_interceptor`](crate::Db::with_interceptor)). Both methods do nothing unless
/// implemented. They are called on the task that sends the request, so they should be quick
/// (record, count, hand off to a channel).
///
/// ```
/// use std::sync::Mutex;
/// use ddb_model::intercept::{Additions, AddedCondition, Interceptor, Outcome, Request};
///
/// /// Records every request, and refuses writes to items a legal hold froze.
/// #[derive(Default)]
/// struct Audit(Mutex<Vec<String>>);
///
/// impl Interceptor for Audit {
///     fn before(&self, request: &Request, add: &mut Additions) {
///         self.0.lock().unwrap().push(request.to_string());
///         if matches!(request, Request::UpdateItem(_) | Request::DeleteItem(_)) {
///             add.condition(
///                 AddedCondition::new("attribute_not_exists(#hold)").name("#hold", "legal_hold"),
///             );
///         }
///     }
///     fn after(&self, _request: &Request, outcome: Outcome<'_>) {
///         if let Outcome::Refused(e) = outcome {
///             self.0.lock().unwrap().push(format!("refused: {e}"));
///         }
///     }
/// }
/// ```
pub trait Interceptor: Send + Sync + 'static {
    /// Called before `request` is sent; `add` adds a condition to a write.
    fn before(&self, request: &Request, add: &mut Additions) {
        let _ = (request, add);
    }

    /// Called once `request` has its answer or error.
    fn after(&self, request: &Request, outcome: Outcome<'_>) {
        let _ = (request, outcome);
    }
}
