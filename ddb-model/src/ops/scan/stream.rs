//! [`ScanStream`]: the items of a scan as pages arrive, ending after the first error.

use std::fmt;
use std::future::ready;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures_core::Stream;
use futures_util::stream::{self, StreamExt};

use super::pages::Page;
use crate::error::Error;
use crate::item::Item;

/// A stream of scanned items: entities of one type ([`Scan::stream`](super::Scan::stream)) or raw items
/// ([`ScanItems::stream`](super::ScanItems::stream)).
///
/// Items arrive as pages arrive; segments run concurrently, so items of different segments
/// interleave. The stream ends after the first error. Example: [`Scan`](super::Scan).
#[must_use = "streams do nothing unless polled"]
pub struct ScanStream<T> {
    inner: Pin<Box<dyn Stream<Item = Result<T, Error>> + Send>>,
}

impl<T> Stream for ScanStream<T> {
    type Item = Result<T, Error>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.inner.as_mut().poll_next(cx)
    }
}

impl<T> fmt::Debug for ScanStream<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ScanStream")
    }
}

impl<T: Send + 'static> ScanStream<T> {
    pub(super) fn new(inner: impl Stream<Item = Result<T, Error>> + Send + 'static) -> Self {
        // End after the first error: a consumer never sees items after a failure it may have
        // decided to ignore.
        let inner = inner.scan(false, |failed, item| {
            if *failed {
                return ready(None);
            }
            *failed = item.is_err();
            ready(Some(item))
        });
        ScanStream { inner: Box::pin(inner) }
    }

    pub(super) fn failed(error: Error) -> Self {
        ScanStream::new(stream::once(ready(Err(error))))
    }

    /// The items of `pages`, each decoded by `decode`, as the pages arrive.
    pub(super) fn decoded(
        pages: impl Stream<Item = Result<Page, Error>> + Send + 'static,
        decode: impl Fn(Item) -> Option<Result<T, Error>> + Send + 'static,
    ) -> Self {
        ScanStream::new(pages.flat_map(move |page| {
            stream::iter(match page {
                Ok(page) => page.items.into_iter().filter_map(&decode).collect(),
                Err(e) => vec![Err(e)],
            })
        }))
    }
}
