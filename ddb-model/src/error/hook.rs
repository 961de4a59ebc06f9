//! [`HookProblem`]: what a per-entity hook (`#[entity(validate = ..)]`,
//! `#[entity(after_read = ..)]`) refused or broke, carried by [`Error::Hook`](super::Error::Hook).

use super::UpgradeError;

/// What went wrong with an entity's hook ([`Error::Hook`](super::Error::Hook)).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HookProblem {
    /// The entity's validation (`#[entity(validate = ..)]`) refused the value: nothing was
    /// sent. `source` is the validation's own error (downcast it to its type, or read it as
    /// the [`source`](std::error::Error::source) of the [`Error`](super::Error)).
    #[error("refused by its validation: {source}")]
    Invalid {
        /// The validation's error.
        #[source]
        source: UpgradeError,
    },
    /// The transformation after read (`#[entity(after_read = ..)]`) changed the value's key:
    /// a hook may change fields, never the key the item is stored under.
    #[error("its `after_read` hook changed the key to {changed}")]
    KeyChanged {
        /// The key the changed value has, for display.
        changed: String,
    },
    /// The transformation after read changed the value's version (optimistic locking):
    /// a hook may change fields, never the version the library checks on the next write.
    #[error("its `after_read` hook changed the version from {stored} to {changed}")]
    VersionChanged {
        /// The version stored.
        stored: u64,
        /// The version the hook left.
        changed: u64,
    },
}
