//! What the AWS Database Encryption SDK does with an entity's attributes: the fields marked
//! `#[encrypt]` or `#[sign_only]` ([`Entity::CRYPTO`](super::Entity::CRYPTO)), and the
//! attributes the SDK adds to the items it signs. The SDK itself is in `crate::encryption`
//! (feature `encryption`); the model only knows the declaration, whatever the features.

use super::entity::Entity;
use crate::error::{EncryptionProblem, Error};

/// What the SDK does with a field's attribute.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Crypto {
    /// `#[encrypt]`: encrypted and signed (the SDK's `ENCRYPT_AND_SIGN`).
    Encrypt,
    /// `#[sign_only]`: stored in plaintext and signed (`SIGN_ONLY`), as every other attribute
    /// of an entity with encrypted fields is.
    SignOnly,
}

/// A field marked `#[encrypt]` or `#[sign_only]`: its stored attribute and what the SDK does
/// with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CryptoField {
    /// The stored attribute name.
    pub attr: &'static str,
    /// What the SDK does with it.
    pub action: Crypto,
}

/// The attributes the SDK adds to every item it signs (its header and its footer, the
/// signature). Reads remove them before deserializing; a field may not use these names.
pub const SDK_ATTRS: [&str; 2] = ["aws_dbe_head", "aws_dbe_foot"];

/// True when `E`'s items are encrypted and signed: it declares `#[encrypt]` or `#[sign_only]`
/// fields.
pub const fn is_sealed<E: Entity>() -> bool {
    !E::CRYPTO.is_empty()
}

/// The error of `operation` on a sealed entity, which cannot keep its items' signature.
pub(crate) fn unsupported<E: Entity>(operation: &'static str) -> Error {
    refused::<E>(EncryptionProblem::Unsupported { operation })
}

/// [`Error::Encryption`] of `E` for a problem found before sending.
pub(crate) fn refused<E: Entity>(problem: EncryptionProblem) -> Error {
    Error::Encryption { entity: E::NAME, key: None, problem, source: None }
}

/// Refuses `operation` on a sealed `E`: an operation that writes or reads `E`'s items without
/// the SDK.
pub(crate) fn refuse_sealed<E: Entity>(operation: &'static str) -> Result<(), Error> {
    if is_sealed::<E>() { Err(unsupported::<E>(operation)) } else { Ok(()) }
}
