//! What a request adds to its handle's cost report ([`Db::with_cost_report`]): read from the
//! request as sent (its partition key, the item a put writes), from its answer (capacity,
//! items read and returned, their sizes) and from its trace (the throttling reasons of each
//! throttled attempt). Called by the one sender ([`retry`](super::retry)) only for handles
//! that keep a report.

use aws_sdk_dynamodb::types::AttributeValue;

use super::fluent::Response;
use super::retry::{Call, SendError};
use crate::db::Db;
use crate::intercept::Request;
use crate::item::{Item, item_size};
use crate::model::Table;
use crate::stats::Sample;
use crate::trace::Trace;

/// Records the call `call` of `request` (the request as sent, when the handle keeps a
/// report) with its `result` in `db`'s cost report; `trace` holds the throttling reasons of
/// each of its attempts, the ones the SDK retried included.
pub(super) fn record<T: Table, O: Response>(
    db: &Db<T>,
    call: &Call<'_>,
    request: Option<&Request>,
    result: &Result<O, SendError>,
    trace: &Trace,
) {
    let Some(cost) = db.cost() else { return };
    let (capacity, items_read, returned, counts) = match result {
        Ok(out) => (out.consumed(), out.items_read(), out.returned(), out.counts()),
        Err(_) => (&[][..], 0, &[][..], None),
    };
    // A query's or scan's `Count` (its items may be left out: `Select: COUNT`).
    let items_returned =
        counts.map_or(wide(returned.len()), |(n, _)| u64::try_from(n).unwrap_or(0));
    let (bytes_returned, max_item_bytes) = returned
        .iter()
        .map(size)
        .fold((0u64, 0u64), |(sum, max), n| (sum.saturating_add(n), max.max(n)));
    let bytes_written = match (request, result) {
        (Some(Request::PutItem(input)), Ok(_)) => input.item().map_or(0, size),
        _ => 0,
    };
    // Every throttled attempt, the SDK's retried ones included (the trace of a request of a
    // handle with a cost report reads each 400 answer).
    let attempts = trace.throttles();
    let throttles: Vec<&str> = attempts.iter().map(String::as_str).collect();
    cost.record(&Sample {
        op: call.op,
        entity: call.entity,
        index: call.index,
        capacity,
        items_read,
        items_returned,
        bytes_returned,
        max_item_bytes,
        bytes_written,
        partition_key: request.and_then(|r| partition_key(r, T::PK)),
        throttles: &throttles,
    });
}

/// The partition key a request names: the key of a single-item request (`pk`, the table's
/// partition-key attribute), the value of the first equality of a query's key condition
/// (the partition key, of the table or of the index it reads). Scans, batches and
/// transactions name none (or many).
fn partition_key(request: &Request, pk: &str) -> Option<String> {
    let value = match request {
        Request::GetItem(r) => r.key()?.get(pk),
        Request::PutItem(r) => r.item()?.get(pk),
        Request::UpdateItem(r) => r.key()?.get(pk),
        Request::DeleteItem(r) => r.key()?.get(pk),
        Request::Query(r) => {
            let first = r.key_condition_expression()?.split(" AND ").next()?;
            let (_, placeholder) = first.split_once(" = ")?;
            r.expression_attribute_values()?.get(placeholder.trim())
        }
        _ => None,
    }?;
    match value {
        AttributeValue::S(s) | AttributeValue::N(s) => Some(s.clone()),
        AttributeValue::B(b) => Some(aws_smithy_types::base64::encode(b.as_ref())),
        _ => None,
    }
}

fn size(item: &Item) -> u64 {
    wide(item_size(item))
}

fn wide(n: usize) -> u64 {
    u64::try_from(n).unwrap_or(u64::MAX)
}
