//! [`EncryptionProblem`]: why an entity with encrypted or signed fields (`#[encrypt]`,
//! `#[sign_only]`) could not be written or read (in [`Error::Encryption`](super::Error::Encryption)).

/// What went wrong with an entity's encrypted or signed fields. Every problem but
/// [`Unverified`](EncryptionProblem::Unverified) is found before anything is sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EncryptionProblem {
    /// The `Db` has no encryption configured (`Db::with_encryption`, feature `encryption`):
    /// nothing of the entity is written in plaintext or read unverified.
    #[error("the Db has no encryption configured (feature `encryption`, `Db::with_encryption`)")]
    NotConfigured,
    /// The operation cannot keep an item's signature: it changes signed attributes in place
    /// (a transaction update, a tree or edge write, a migration), computes on the stored
    /// value (an update's `add`, `append` or set elements), reads a part of a signed item (a
    /// projection), or reads items without the `Db` that decrypts them (a raw `from_item`).
    /// An `update` of `set` and `remove` actions is done for you as a read and a put of the
    /// whole item.
    #[error("{operation} cannot keep the item's signature")]
    Unsupported {
        /// The operation, as its method is named (`update`, `upsert`, `from_item`, ...).
        operation: &'static str,
    },
    /// The stored item carries no signature (it was written in plaintext, or its signature
    /// attributes were removed).
    #[error("the stored item is not signed")]
    NotSigned,
    /// The item's signature or its encrypted attributes do not verify: an attribute was
    /// changed, added or removed after the item was written, or it was written with another
    /// key. The SDK's error is the [`source`](std::error::Error::source).
    #[error("the stored item does not verify (changed after it was written, or another key)")]
    Unverified,
    /// The SDK refused to encrypt the item (its configuration, the keyring). The SDK's error
    /// is the [`source`](std::error::Error::source).
    #[error("the item could not be encrypted")]
    Encrypt,
}
