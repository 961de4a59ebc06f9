//! Running a scan: its options, one `Scan` request per page of each segment, segments read
//! concurrently, and the migration's scan of outdated items.

use std::future::ready;
use std::sync::Arc;

use aws_sdk_dynamodb::types::{AttributeValue, Select};
use futures_core::Stream;
use futures_util::stream::{self, StreamExt, TryStreamExt};

use crate::db::Db;
use crate::error::Error;
use crate::expr::{ExprBuilder, Names, Values};
use crate::item::Item;
use crate::model::{Entity, Table, is_entity_item};
use crate::ops::query::identity_filter;
use crate::ops::retry;
use crate::stats::Op;

/// Most segments DynamoDB accepts (`TotalSegments`).
const MAX_SEGMENTS: u32 = 1_000_000;
const DEFAULT_CONCURRENCY: usize = 4;

/// Segments, page size, read consistency, parallelism.
#[derive(Debug, Clone, Copy)]
pub(super) struct Options {
    pub(super) segments: u32,
    pub(super) page_size: Option<i32>,
    pub(super) consistent: bool,
    pub(super) concurrency: usize,
    /// The global secondary index to scan instead of the table.
    pub(super) index: Option<&'static str>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            segments: 1,
            page_size: None,
            consistent: false,
            concurrency: DEFAULT_CONCURRENCY,
            index: None,
        }
    }
}

impl Options {
    pub(super) fn segments(&mut self, n: u32) {
        self.segments = n.clamp(1, MAX_SEGMENTS);
    }

    pub(super) fn page_size(&mut self, n: u32) {
        self.page_size = Some(i32::try_from(n.max(1)).unwrap_or(i32::MAX));
    }
}

/// One Scan request, without its segment and start key.
pub(super) struct Request {
    pub(super) options: Options,
    pub(super) filter: Option<String>,
    pub(super) names: Option<Names>,
    pub(super) values: Option<Values>,
    pub(super) count_only: bool,
    /// The entity scanned (`None`: untyped items).
    pub(super) entity: Option<&'static str>,
}

/// One page of one segment.
pub(super) struct Page {
    pub(super) items: Vec<Item>,
    pub(super) count: usize,
    /// Items the service evaluated for the page (before the filter).
    scanned: usize,
}

/// Where a segment stands.
enum Cursor {
    Start,
    After(Item),
    Done,
}

/// Every page of every segment, segments `concurrency` at a time.
pub(super) fn pages<T: Table>(
    db: Db<T>,
    request: Request,
) -> impl Stream<Item = Result<Page, Error>> + Send + 'static {
    let request = Arc::new(request);
    let Options { segments, concurrency, .. } = request.options;
    stream::iter(0..segments)
        .map(move |segment| Box::pin(segment_pages(db.clone(), Arc::clone(&request), segment)))
        .flatten_unordered(concurrency.max(1))
}

/// The pages of one segment, in order.
fn segment_pages<T: Table>(
    db: Db<T>,
    request: Arc<Request>,
    segment: u32,
) -> impl Stream<Item = Result<Page, Error>> + Send + 'static {
    stream::unfold(Cursor::Start, move |cursor| {
        let (db, request) = (db.clone(), Arc::clone(&request));
        async move {
            let start = match cursor {
                Cursor::Start => None,
                Cursor::After(key) => Some(key),
                Cursor::Done => return None,
            };
            Some(match scan_page(&db, &request, segment, start).await {
                Ok((page, next)) => (Ok(page), next.map_or(Cursor::Done, Cursor::After)),
                Err(e) => (Err(e), Cursor::Done),
            })
        }
    })
}

/// One page of `segment`, from `start`; the key to continue from, `None` after the last.
async fn scan_page<T: Table>(
    db: &Db<T>,
    request: &Request,
    segment: u32,
    start: Option<Item>,
) -> Result<(Page, Option<Item>), Error> {
    let options = request.options;
    crate::ops::tenant::unconfined(db, Op::Scan, options.index)?;
    let mut scan = db
        .client()
        .scan()
        .table_name(db.table_name())
        .set_index_name(options.index.map(str::to_owned))
        .set_consistent_read(options.consistent.then_some(true))
        .set_limit(options.page_size)
        .set_exclusive_start_key(start)
        .set_filter_expression(request.filter.clone())
        .set_expression_attribute_names(request.names.clone())
        .set_expression_attribute_values(request.values.clone())
        .set_return_consumed_capacity(db.capacity_mode());
    if options.segments > 1 {
        // Both fit: segments <= MAX_SEGMENTS < i32::MAX.
        let total = i32::try_from(options.segments).unwrap_or(i32::MAX);
        scan = scan.segment(i32::try_from(segment).unwrap_or(0)).total_segments(total);
    }
    if request.count_only {
        scan = scan.select(Select::Count);
    }
    let call = retry::Call {
        op: Op::Scan,
        index: options.index,
        segment: (options.segments > 1).then_some((segment, options.segments)),
        entity: request.entity,
    };
    let out = retry::send(db, call, scan).await?;
    let next = out.last_evaluated_key.filter(|key| !key.is_empty());
    let count = usize::try_from(out.count).unwrap_or(0);
    let scanned = usize::try_from(out.scanned_count).unwrap_or(0);
    Ok((Page { items: out.items.unwrap_or_default(), count, scanned }, next))
}

/// One page of a segment of the migration's scan (see [`Db::migrate`](crate::Db::migrate)):
/// the items of `E` stored with an older schema version than `E`'s (or without one), from
/// `start`. Returns the items, the number of items the service evaluated, and the key to
/// continue from (`None` after the segment's last page).
pub(crate) async fn outdated_page<E: Entity>(
    db: &Db<E::Table>,
    segment: u32,
    segments: u32,
    page_size: Option<u32>,
    start: Option<Item>,
) -> Result<(Vec<Item>, usize, Option<Item>), Error> {
    let current = E::SCHEMA.map_or(crate::model::UNVERSIONED, |s| s.version);
    entity_page::<E>(db, (segment, segments), page_size, start, |b| {
        let attr = b.name(<E::Table as Table>::SCHEMA_ATTR);
        let value = b.value(AttributeValue::N(current.to_string()));
        Some(format!("(attribute_not_exists({attr}) OR {attr} < {value})"))
    })
    .await
}

/// One page of segment `segment` of `segments` of a scan of `E`'s items that also pass the
/// filter `more` writes (if any), from `start`: the items, the number of items the service
/// evaluated, and the key to continue from (`None` after the segment's last page). The scan
/// of the migration and of a re-key.
pub(crate) async fn entity_page<E: Entity>(
    db: &Db<E::Table>,
    (segment, segments): (u32, u32),
    page_size: Option<u32>,
    start: Option<Item>,
    more: impl FnOnce(&mut ExprBuilder) -> Option<String>,
) -> Result<(Vec<Item>, usize, Option<Item>), Error> {
    let mut b = ExprBuilder::default();
    let mut parts = Vec::new();
    parts.extend(identity_filter::<E>(&mut b));
    parts.extend(more(&mut b));
    let filter = (!parts.is_empty()).then(|| parts.join(" AND "));
    if let Some(filter) = &filter {
        crate::expr::check_expression("FilterExpression", filter)?;
    }
    let (names, values) = b.finish();
    let mut options = Options::default();
    options.segments(segments);
    if let Some(n) = page_size {
        options.page_size(n);
    }
    let request =
        Request { options, filter, names, values, count_only: false, entity: Some(E::NAME) };
    let (page, next) = scan_page(db, &request, segment.min(options.segments - 1), start).await?;
    // An entity told apart by its keys: the other items of its key range are not its own.
    let items = page.items.into_iter().filter(is_entity_item::<E>).collect();
    Ok((items, page.scanned, next))
}

/// Sums the counts of every page.
pub(super) async fn count_pages(
    pages: impl Stream<Item = Result<Page, Error>>,
) -> Result<usize, Error> {
    pages.try_fold(0usize, |total, page| ready(Ok(total.saturating_add(page.count)))).await
}
