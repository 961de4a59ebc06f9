//! [`Slot`]: a typed handle on one result of a multi-key read (batch or transactional).

use std::fmt;
use std::marker::PhantomData;

/// The place of one key in a multi-key read ([`BatchRead`](super::BatchRead) or
/// [`TransactGet`](super::TransactGet)), typed by the key's entity, to read that entity back
/// from the result. A slot of another read is an error, never another item.
/// Example: [`BatchRead`](super::BatchRead).
pub struct Slot<E> {
    /// The read the slot belongs to.
    pub(crate) owner: u64,
    /// The key's position in that read.
    pub(crate) position: usize,
    _entity: PhantomData<fn() -> E>,
}

impl<E> Slot<E> {
    pub(crate) fn new(owner: u64, position: usize) -> Self {
        Slot { owner, position, _entity: PhantomData }
    }
}

impl<E> Clone for Slot<E> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<E> Copy for Slot<E> {}

impl<E> fmt::Debug for Slot<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Slot").field("position", &self.position).finish()
    }
}
