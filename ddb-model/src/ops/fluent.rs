//! What the send path knows of each SDK request: [`Fluent`], implemented by one macro for the
//! SDK's fluent builder of every operation the library sends (its input as a [`Request`],
//! sending it, the output a dry run stands in with, and the conditions an interceptor adds),
//! and [`Response`], what the library reads off each output.

use std::collections::HashMap;
use std::future::Future;

use aws_sdk_dynamodb::config::http::HttpResponse;
use aws_sdk_dynamodb::error::{ProvideErrorMetadata, SdkError};
use aws_sdk_dynamodb::operation::RequestId;
use aws_sdk_dynamodb::operation::batch_get_item::BatchGetItemOutput;
use aws_sdk_dynamodb::operation::batch_write_item::BatchWriteItemOutput;
use aws_sdk_dynamodb::operation::create_table::CreateTableOutput;
use aws_sdk_dynamodb::operation::delete_item::DeleteItemOutput;
use aws_sdk_dynamodb::operation::delete_resource_policy::DeleteResourcePolicyOutput;
use aws_sdk_dynamodb::operation::delete_table::DeleteTableOutput;
use aws_sdk_dynamodb::operation::describe_continuous_backups::DescribeContinuousBackupsOutput;
use aws_sdk_dynamodb::operation::describe_table::DescribeTableOutput;
use aws_sdk_dynamodb::operation::describe_time_to_live::DescribeTimeToLiveOutput;
use aws_sdk_dynamodb::operation::get_item::GetItemOutput;
use aws_sdk_dynamodb::operation::get_resource_policy::GetResourcePolicyOutput;
use aws_sdk_dynamodb::operation::list_tags_of_resource::ListTagsOfResourceOutput;
use aws_sdk_dynamodb::operation::put_item::PutItemOutput;
use aws_sdk_dynamodb::operation::put_resource_policy::PutResourcePolicyOutput;
use aws_sdk_dynamodb::operation::query::QueryOutput;
use aws_sdk_dynamodb::operation::scan::ScanOutput;
use aws_sdk_dynamodb::operation::search_vectors::SearchVectorsOutput;
use aws_sdk_dynamodb::operation::tag_resource::TagResourceOutput;
use aws_sdk_dynamodb::operation::transact_get_items::TransactGetItemsOutput;
use aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsOutput;
use aws_sdk_dynamodb::operation::untag_resource::UntagResourceOutput;
use aws_sdk_dynamodb::operation::update_continuous_backups::UpdateContinuousBackupsOutput;
use aws_sdk_dynamodb::operation::update_item::UpdateItemOutput;
use aws_sdk_dynamodb::operation::update_table::UpdateTableOutput;
use aws_sdk_dynamodb::operation::update_time_to_live::UpdateTimeToLiveOutput;
use aws_sdk_dynamodb::types::ConsumedCapacity;

use crate::error::{Error, RequestProblem};
use crate::intercept::{Added, Rendered, Reply, Request};
use crate::item::Item;
use crate::stats::Op;

/// What the library reads off every response, in this one place ([`send`],
/// [`send_retrying`]): the capacity it says its request consumed, the items the service read
/// for it, and the counts a query or scan returns, for the `Db`'s statistics and the
/// request's span.
pub(crate) trait Response: RequestId {
    /// The consumed capacity the service returned (none unless it was asked for).
    fn consumed(&self) -> &[ConsumedCapacity];

    /// The items the service read: a query's or scan's `ScannedCount`, the items a get
    /// returned.
    fn items_read(&self) -> u64 {
        0
    }

    /// A query's or scan's `Count` and `ScannedCount`.
    fn counts(&self) -> Option<(i32, i32)> {
        None
    }

    /// The items a get, query or scan returned (for the sizes of the cost report).
    fn returned(&self) -> &[crate::item::Item] {
        &[]
    }
}

/// `Response` for SDK outputs: where their consumed capacity is (`one`, `many`, `none`), and
/// for one output the items it read (from the output `o`); `counted` for queries and scans.
macro_rules! response {
    ($output:ty: $capacity:ident, read |$o:ident| $read:expr) => {
        impl Response for $output {
            fn consumed(&self) -> &[ConsumedCapacity] {
                response!(@$capacity self)
            }
            fn items_read(&self) -> u64 {
                let $o = self;
                $read
            }
        }
    };
    (counted: $($output:ty),+) => {$(
        impl Response for $output {
            fn consumed(&self) -> &[ConsumedCapacity] {
                self.consumed_capacity.as_slice()
            }
            fn items_read(&self) -> u64 {
                u64::try_from(self.scanned_count).unwrap_or(0)
            }
            fn counts(&self) -> Option<(i32, i32)> {
                Some((self.count, self.scanned_count))
            }
            fn returned(&self) -> &[crate::item::Item] {
                self.items.as_deref().unwrap_or_default()
            }
        }
    )+};
    ($($output:ty),+: $capacity:ident) => {$(
        impl Response for $output {
            fn consumed(&self) -> &[ConsumedCapacity] {
                response!(@$capacity self)
            }
        }
    )+};
    (@one $out:ident) => { $out.consumed_capacity.as_slice() };
    (@many $out:ident) => { $out.consumed_capacity.as_deref().unwrap_or_default() };
    (@none $out:ident) => { &[] };
}

/// `usize` to `u64`, saturating.
fn wide(n: usize) -> u64 {
    u64::try_from(n).unwrap_or(u64::MAX)
}

response!(PutItemOutput, UpdateItemOutput, DeleteItemOutput: one);
response!(BatchWriteItemOutput, TransactWriteItemsOutput: many);
response!(CreateTableOutput, DeleteTableOutput, DescribeTableOutput: none);
response!(DescribeTimeToLiveOutput, UpdateTimeToLiveOutput: none);
response!(
    UpdateTableOutput,
    DescribeContinuousBackupsOutput,
    UpdateContinuousBackupsOutput,
    ListTagsOfResourceOutput,
    TagResourceOutput,
    UntagResourceOutput,
    GetResourcePolicyOutput,
    PutResourcePolicyOutput,
    DeleteResourcePolicyOutput: none
);
response!(counted: QueryOutput, ScanOutput);
impl Response for GetItemOutput {
    fn consumed(&self) -> &[ConsumedCapacity] {
        self.consumed_capacity.as_slice()
    }
    fn items_read(&self) -> u64 {
        u64::from(self.item.is_some())
    }
    fn returned(&self) -> &[crate::item::Item] {
        self.item.as_slice()
    }
}
response!(BatchGetItemOutput: many, read |o| {
    wide(o.responses.iter().flat_map(|r| r.values()).map(Vec::len).sum())
});
response!(TransactGetItemsOutput: many, read |o| {
    wide(o.responses.iter().flatten().filter(|r| r.item.is_some()).count())
});
// A search's capacity is in bytes (`VectorCapacity`), not in units: none is recorded.
response!(SearchVectorsOutput: none, read |o| wide(o.search_results().len()));

/// An SDK fluent builder the library sends through `ops/retry.rs`.
pub(crate) trait Fluent: Clone + Send + Sized {
    /// The operation's output.
    type Output: Response + Send + Sync;
    /// The operation's error.
    type Err: std::error::Error + ProvideErrorMetadata + Send + Sync + 'static;
    /// The operation.
    const OP: Op;

    /// The request as it would be sent (a copy of the builder's input).
    fn request(&self) -> Result<Request, Error>;

    /// Sends the request.
    fn dispatch(
        self,
    ) -> impl Future<Output = Result<Self::Output, SdkError<Self::Err, HttpResponse>>> + Send;

    /// The output a dry run answers a withheld request with: an empty one (no item, no
    /// page after this one, nothing unprocessed).
    fn withheld() -> Self::Output;

    /// The output, as an interceptor sees it.
    fn reply(output: &Self::Output) -> Reply<'_>;

    /// The request with `added` ANDed to its conditions, and what to check if it fails its
    /// condition: each addition, renamed, with its action and key (`keys`: the table's key
    /// attribute names). Only writes that carry a condition accept additions.
    fn add(self, added: &[Added], keys: Keys) -> Result<(Self, Vec<Check>), RequestProblem> {
        let _ = keys;
        match added.first() {
            None => Ok((self, Vec::new())),
            Some(a) => {
                Err(RequestProblem::ConditionNotApplicable { op: Self::OP, action: a.action })
            }
        }
    }
}

/// The table's key attribute names (partition, sort).
pub(crate) type Keys = (&'static str, Option<&'static str>);

/// An added condition, renamed, on the item under `key` (of `table`), for action `action` (or
/// the whole request).
#[derive(Debug, Clone)]
pub(crate) struct Check {
    pub(crate) action: Option<usize>,
    pub(crate) table: String,
    pub(crate) key: Item,
    pub(crate) condition: Rendered,
}

/// `Fluent` for the SDK fluent builders: `$module::builders::$fluent`, failing with
/// `$module::$err`, answering `$output`; `add` for the writes that take conditions.
macro_rules! fluent {
    ($($op:ident: $module:ident::$fluent:ident, $err:ident => $output:ident $(, add $add:ident)?;)+) => {$(
        impl Fluent for aws_sdk_dynamodb::operation::$module::builders::$fluent {
            type Output = $output;
            type Err = aws_sdk_dynamodb::operation::$module::$err;
            const OP: Op = Op::$op;
            fn request(&self) -> Result<Request, Error> {
                self.as_input().clone().build().map(Request::from).map_err(Error::build)
            }
            fn dispatch(
                self,
            ) -> impl Future<Output = Result<$output, SdkError<Self::Err, HttpResponse>>> + Send
            {
                self.send()
            }
            fn withheld() -> $output {
                $output::builder().build()
            }
            fn reply(output: &$output) -> Reply<'_> {
                Reply::from(output)
            }
            $(
                fn add(self, added: &[Added], keys: Keys) -> Result<(Self, Vec<Check>), RequestProblem> {
                    $add(self, added, keys)
                }
            )?
        }
    )+};
}

fluent! {
    GetItem: get_item::GetItemFluentBuilder, GetItemError => GetItemOutput;
    PutItem: put_item::PutItemFluentBuilder, PutItemError => PutItemOutput, add add_put;
    UpdateItem: update_item::UpdateItemFluentBuilder, UpdateItemError => UpdateItemOutput, add add_update;
    DeleteItem: delete_item::DeleteItemFluentBuilder, DeleteItemError => DeleteItemOutput, add add_delete;
    Query: query::QueryFluentBuilder, QueryError => QueryOutput;
    Scan: scan::ScanFluentBuilder, ScanError => ScanOutput;
    BatchGetItem: batch_get_item::BatchGetItemFluentBuilder, BatchGetItemError => BatchGetItemOutput;
    BatchWriteItem: batch_write_item::BatchWriteItemFluentBuilder, BatchWriteItemError => BatchWriteItemOutput;
    TransactGetItems: transact_get_items::TransactGetItemsFluentBuilder, TransactGetItemsError => TransactGetItemsOutput;
    TransactWriteItems: transact_write_items::TransactWriteItemsFluentBuilder, TransactWriteItemsError => TransactWriteItemsOutput, add add_transaction;
    CreateTable: create_table::CreateTableFluentBuilder, CreateTableError => CreateTableOutput;
    DescribeTable: describe_table::DescribeTableFluentBuilder, DescribeTableError => DescribeTableOutput;
    DeleteTable: delete_table::DeleteTableFluentBuilder, DeleteTableError => DeleteTableOutput;
    SearchVectors: search_vectors::SearchVectorsFluentBuilder, SearchVectorsError => SearchVectorsOutput;
    DescribeTimeToLive: describe_time_to_live::DescribeTimeToLiveFluentBuilder, DescribeTimeToLiveError => DescribeTimeToLiveOutput;
    UpdateTimeToLive: update_time_to_live::UpdateTimeToLiveFluentBuilder, UpdateTimeToLiveError => UpdateTimeToLiveOutput;
    UpdateTable: update_table::UpdateTableFluentBuilder, UpdateTableError => UpdateTableOutput;
    DescribeContinuousBackups: describe_continuous_backups::DescribeContinuousBackupsFluentBuilder, DescribeContinuousBackupsError => DescribeContinuousBackupsOutput;
    UpdateContinuousBackups: update_continuous_backups::UpdateContinuousBackupsFluentBuilder, UpdateContinuousBackupsError => UpdateContinuousBackupsOutput;
    ListTagsOfResource: list_tags_of_resource::ListTagsOfResourceFluentBuilder, ListTagsOfResourceError => ListTagsOfResourceOutput;
    TagResource: tag_resource::TagResourceFluentBuilder, TagResourceError => TagResourceOutput;
    UntagResource: untag_resource::UntagResourceFluentBuilder, UntagResourceError => UntagResourceOutput;
    GetResourcePolicy: get_resource_policy::GetResourcePolicyFluentBuilder, GetResourcePolicyError => GetResourcePolicyOutput;
    PutResourcePolicy: put_resource_policy::PutResourcePolicyFluentBuilder, PutResourcePolicyError => PutResourcePolicyOutput;
    DeleteResourcePolicy: delete_resource_policy::DeleteResourcePolicyFluentBuilder, DeleteResourcePolicyError => DeleteResourcePolicyOutput;
}

/// A request's condition, names and values.
type Parts = (Option<String>, Option<HashMap<String, String>>, Option<Item>);

/// ANDs the additions (all for the whole request, `op`) to `parts`: the checks, on `key` of
/// `table`.
fn and_all(
    op: Op,
    added: &[Added],
    parts: &mut Parts,
    table: &str,
    key: &Item,
) -> Result<Vec<Check>, RequestProblem> {
    let mut next = 0;
    let mut checks = Vec::with_capacity(added.len());
    for a in added {
        if a.action.is_some() {
            return Err(RequestProblem::ConditionNotApplicable { op, action: a.action });
        }
        checks.push(and_one(a, parts, &mut next, table, key)?);
    }
    Ok(checks)
}

/// ANDs one addition to `parts`, renamed around the placeholders they use.
fn and_one(
    a: &Added,
    parts: &mut Parts,
    next: &mut usize,
    table: &str,
    key: &Item,
) -> Result<Check, RequestProblem> {
    let (condition, names, values) = parts;
    let taken = |p: &str| {
        names.as_ref().is_some_and(|n| n.contains_key(p))
            || values.as_ref().is_some_and(|v| v.contains_key(p))
    };
    let rendered = a.condition.render(&taken, next)?;
    rendered.clone().and_into(condition, names, values);
    Ok(Check { action: a.action, table: table.to_owned(), key: key.clone(), condition: rendered })
}

/// The key attributes of `item`.
fn key_of(item: &Item, (pk, sk): Keys) -> Item {
    [Some(pk), sk]
        .into_iter()
        .flatten()
        .filter_map(|k| item.get(k).map(|v| (k.to_owned(), v.clone())))
        .collect()
}

/// `add` for a single write's fluent builder `$b` (its key from `$key`).
macro_rules! add_single {
    ($name:ident, $op:ident, $module:ident::$fluent:ident, |$i:ident, $keys:ident| $key:expr) => {
        fn $name(
            b: aws_sdk_dynamodb::operation::$module::builders::$fluent,
            added: &[Added],
            $keys: Keys,
        ) -> Result<
            (aws_sdk_dynamodb::operation::$module::builders::$fluent, Vec<Check>),
            RequestProblem,
        > {
            let $i = b.as_input();
            let mut parts = (
                $i.get_condition_expression().clone(),
                $i.get_expression_attribute_names().clone(),
                $i.get_expression_attribute_values().clone(),
            );
            let key: Item = $key;
            let table = $i.get_table_name().clone().unwrap_or_default();
            let checks = and_all(Op::$op, added, &mut parts, &table, &key)?;
            let b = b
                .set_condition_expression(parts.0)
                .set_expression_attribute_names(parts.1)
                .set_expression_attribute_values(parts.2);
            Ok((b, checks))
        }
    };
}

add_single!(add_put, PutItem, put_item::PutItemFluentBuilder, |i, keys| {
    i.get_item().as_ref().map(|item| key_of(item, keys)).unwrap_or_default()
});
add_single!(add_update, UpdateItem, update_item::UpdateItemFluentBuilder, |i, _keys| {
    i.get_key().clone().unwrap_or_default()
});
add_single!(add_delete, DeleteItem, delete_item::DeleteItemFluentBuilder, |i, _keys| {
    i.get_key().clone().unwrap_or_default()
});

/// `add` for a transaction: each addition to the action it names.
fn add_transaction(
    b: aws_sdk_dynamodb::operation::transact_write_items::builders::TransactWriteItemsFluentBuilder,
    added: &[Added],
    keys: Keys,
) -> Result<
    (
        aws_sdk_dynamodb::operation::transact_write_items::builders::TransactWriteItemsFluentBuilder,
        Vec<Check>,
    ),
    RequestProblem,
>{
    let op = Op::TransactWriteItems;
    let mut actions = b.as_input().get_transact_items().clone().unwrap_or_default();
    let mut next = vec![0; actions.len()];
    let mut checks = Vec::with_capacity(added.len());
    for a in added {
        let refused = RequestProblem::ConditionNotApplicable { op, action: a.action };
        let Some(i) = a.action.filter(|i| *i < actions.len()) else { return Err(refused) };
        let next = &mut next[i];
        let action = &mut actions[i];
        let check = if let Some(p) = action.put.as_mut() {
            let key = key_of(&p.item, keys);
            let parts = (
                &mut p.condition_expression,
                &mut p.expression_attribute_names,
                &mut p.expression_attribute_values,
            );
            extend(a, parts, next, &p.table_name, key)
        } else if let Some(u) = action.update.as_mut() {
            let parts = (
                &mut u.condition_expression,
                &mut u.expression_attribute_names,
                &mut u.expression_attribute_values,
            );
            extend(a, parts, next, &u.table_name, u.key.clone())
        } else if let Some(d) = action.delete.as_mut() {
            let parts = (
                &mut d.condition_expression,
                &mut d.expression_attribute_names,
                &mut d.expression_attribute_values,
            );
            extend(a, parts, next, &d.table_name, d.key.clone())
        } else if let Some(c) = action.condition_check.as_mut() {
            let mut cond = Some(std::mem::take(&mut c.condition_expression));
            let parts =
                (&mut cond, &mut c.expression_attribute_names, &mut c.expression_attribute_values);
            let check = extend(a, parts, next, &c.table_name, c.key.clone());
            c.condition_expression = cond.unwrap_or_default();
            check
        } else {
            return Err(refused);
        };
        checks.push(check?);
    }
    Ok((b.set_transact_items(Some(actions)), checks))
}

/// [`and_one`] on the parts of one action, in place.
fn extend(
    a: &Added,
    (cond, names, values): (
        &mut Option<String>,
        &mut Option<HashMap<String, String>>,
        &mut Option<Item>,
    ),
    next: &mut usize,
    table: &str,
    key: Item,
) -> Result<Check, RequestProblem> {
    let mut parts = (cond.take(), names.take(), values.take());
    let check = and_one(a, &mut parts, next, table, &key);
    (*cond, *names, *values) = parts;
    check
}
