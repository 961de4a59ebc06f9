//! Parallel scan: `Scan` with `Segment` / `TotalSegments`, as a stream of items. [`Scan`]
//! reads the items of one entity type, [`ScanItems`] every raw item; both run through the
//! segments and pages of `pages.rs` and yield a [`ScanStream`].

mod entity;
mod items;
mod pages;
mod stream;

pub use entity::Scan;
pub use items::ScanItems;
pub(crate) use pages::{entity_page, outdated_page};
pub use stream::ScanStream;
