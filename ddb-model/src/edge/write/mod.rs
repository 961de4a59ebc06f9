//! Edge writes: link, unlink and property updates, each one transaction holding the forward
//! item, the item of the other direction and the degree counters, sent again when it
//! conflicts with a concurrent one. `action.rs` renders each action with its guard,
//! `moves.rs` merges the counter moves, `commit.rs` sends the transaction; `link.rs`,
//! `unlink.rs` and `update.rs` are the three writes.

mod action;
mod commit;
mod link;
mod moves;
mod unlink;
mod update;

use super::{Edge, Edges};

pub(crate) use action::{Raw, key_attrs, raw};
pub(crate) use commit::{commit, failed_at, missing_nodes, retryable};
pub use link::{LinkReport, Linked};
pub(crate) use moves::Moves;
pub use unlink::Unlinked;
pub use update::EdgeUpdate;

impl<'a, E: Edge> Edges<'a, E> {
    fn table(&self) -> &'a str {
        self.db.table_name()
    }
}
