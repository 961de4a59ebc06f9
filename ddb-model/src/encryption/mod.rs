//! Client-side encrypted and signed fields with the AWS Database Encryption SDK (feature
//! `encryption`): [`Encryption`], the keyring a [`Db`](crate::Db) encrypts and verifies with
//! (`Db::with_encryption`), and the SDK itself re-exported as [`aws_db_esdk`], whose material
//! providers make keyrings (a raw AES key for tests, AWS KMS in production).
//!
//! An entity with fields marked `#[encrypt]` or `#[sign_only]` is *sealed*: every item of it
//! the `Db` writes is encrypted and signed by the SDK's item encryptor, every item it reads is
//! verified and decrypted. The attribute actions are the SDK's: `ENCRYPT_AND_SIGN` for
//! `#[encrypt]`, `SIGN_ONLY` for every other attribute (the keys, the entity type, every
//! field), `DO_NOTHING` for the bookkeeping attributes a layer above updates in place. The
//! SDK's logical table name is the layout's [`crate::Table::NAME`], so the same
//! items read back through any physical table of the layout.
//!
//! The guide's chapter `docs/encryption.md` has the rules and an example.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use aws_db_esdk::CryptoAction;
use aws_db_esdk::item_encryptor::client::Client as ItemEncryptor;
use aws_db_esdk::item_encryptor::types::dynamo_db_item_encryptor_config::DynamoDbItemEncryptorConfig;
use aws_db_esdk::material_providers::types::keyring::KeyringRef;
use futures_util::FutureExt;

use crate::error::{EncryptionProblem, Error, InternalProblem};
use crate::item::Item;
use crate::model::{Crypto, Entity, MARKER_PREFIX, SDK_ATTRS, Table, stored_key};

pub use aws_db_esdk;

/// The most item encryptors kept (one per entity and set of attribute names): more shapes
/// than that start the cache over.
const MAX_ENCRYPTORS: usize = 256;

/// The keyring a [`Db`](crate::Db) encrypts, signs, verifies and decrypts sealed entities'
/// items with (see the [module](self)). Cheap to clone.
///
/// ```no_run
/// # async fn demo(db: ddb_model::Db, key: Vec<u8>) -> Result<(), Box<dyn std::error::Error>> {
/// use ddb_model::encryption::{Encryption, aws_db_esdk};
/// use aws_db_esdk::material_providers::client::Client as Mpl;
/// use aws_db_esdk::material_providers::types::AesWrappingAlg;
/// use aws_db_esdk::material_providers::types::material_providers_config::MaterialProvidersConfig;
///
/// let mpl = Mpl::from_conf(MaterialProvidersConfig::builder().build()?)?;
/// let keyring = mpl
///     .create_raw_aes_keyring()
///     .key_namespace("app")
///     .key_name("local-key")
///     .wrapping_key(key) // 32 bytes
///     .wrapping_alg(AesWrappingAlg::AlgAes256GcmIv12Tag16)
///     .send()
///     .await?;
/// let db = db.with_encryption(Encryption::new(keyring));
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Encryption {
    keyring: KeyringRef,
    /// The item encryptors made so far, per entity and set of attribute names.
    encryptors: Arc<Mutex<HashMap<String, ItemEncryptor>>>,
}

impl std::fmt::Debug for Encryption {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Encryption").finish_non_exhaustive()
    }
}

impl Encryption {
    /// Encryption with `keyring`: a raw AES keyring (tests, local development), an AWS KMS
    /// keyring (production), or any other keyring of the SDK's material providers.
    pub fn new(keyring: KeyringRef) -> Self {
        Encryption { keyring, encryptors: Arc::default() }
    }

    /// Encrypts and signs `item`, an item of `E` in plaintext.
    pub(crate) fn seal<E: Entity>(&self, item: Item) -> Result<Item, Error> {
        let failed = |problem, source| sdk_error::<E>(None, problem, source);
        let encryptor = self.encryptor::<E>(&item)?;
        let sent = encryptor.encrypt_item().plaintext_item(item).send();
        match sent.now_or_never() {
            Some(Ok(out)) => out
                .encrypted_item
                .ok_or_else(|| crate::model::refused::<E>(EncryptionProblem::Encrypt)),
            Some(Err(e)) => Err(failed(EncryptionProblem::Encrypt, Box::new(e))),
            None => Err(Error::Internal { problem: InternalProblem::EncryptionPending }),
        }
    }

    /// Verifies and decrypts `item`, a stored item of `E`; the SDK's attributes are removed.
    pub(crate) fn open<E: Entity>(&self, item: Item) -> Result<Item, Error> {
        let key = || Some(stored_key::<E::Table>(&item));
        if !SDK_ATTRS.iter().all(|a| item.contains_key(*a)) {
            return Err(Error::Encryption {
                entity: E::NAME,
                key: key(),
                problem: EncryptionProblem::NotSigned,
                source: None,
            });
        }
        let encryptor = self.encryptor::<E>(&item)?;
        let shown = key();
        let sent = encryptor.decrypt_item().encrypted_item(item).send();
        let mut plain = match sent.now_or_never() {
            Some(Ok(out)) => out.plaintext_item.unwrap_or_default(),
            Some(Err(e)) => {
                return Err(sdk_error::<E>(shown, EncryptionProblem::Unverified, Box::new(e)));
            }
            None => return Err(Error::Internal { problem: InternalProblem::EncryptionPending }),
        };
        for attr in SDK_ATTRS {
            plain.remove(attr);
        }
        Ok(plain)
    }

    /// The item encryptor of `E`'s items with the attributes of `item` (the SDK's own
    /// attributes aside), made once per entity and set of names.
    fn encryptor<E: Entity>(&self, item: &Item) -> Result<ItemEncryptor, Error> {
        let mut names: Vec<&str> =
            item.keys().map(String::as_str).filter(|n| !SDK_ATTRS.contains(n)).collect();
        names.sort_unstable();
        let mut cache_key = String::from(E::NAME);
        for name in &names {
            cache_key.push('\0');
            cache_key.push_str(name);
        }
        let mut cache = self.encryptors.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(found) = cache.get(&cache_key) {
            return Ok(found.clone());
        }
        let actions: HashMap<String, CryptoAction> =
            names.iter().map(|n| ((*n).to_owned(), action_of::<E>(n))).collect();
        let unsigned: Vec<String> = E::BOOKKEEPING_ATTRS.iter().map(|a| (*a).to_owned()).collect();
        let mut config = DynamoDbItemEncryptorConfig::builder()
            .logical_table_name(<E::Table as Table>::NAME)
            .partition_key_name(<E::Table as Table>::PK)
            .attribute_actions_on_encrypt(actions)
            .keyring(self.keyring.clone())
            .allowed_unsigned_attribute_prefix(MARKER_PREFIX);
        if let Some(sk) = <E::Table as Table>::SK {
            config = config.sort_key_name(sk);
        }
        if !unsigned.is_empty() {
            config = config.allowed_unsigned_attributes(unsigned);
        }
        let made = config
            .build()
            .map_err(|e| sdk_error::<E>(None, EncryptionProblem::Encrypt, Box::new(e)))
            .and_then(|config| {
                ItemEncryptor::from_conf(config)
                    .map_err(|e| sdk_error::<E>(None, EncryptionProblem::Encrypt, Box::new(e)))
            })?;
        if cache.len() >= MAX_ENCRYPTORS {
            cache.clear();
        }
        cache.insert(cache_key, made.clone());
        Ok(made)
    }
}

/// What the SDK does with attribute `name` of `E`'s items: `DO_NOTHING` for bookkeeping a
/// layer above updates in place (and update markers), a field's `#[encrypt]` or
/// `#[sign_only]`, `SIGN_ONLY` for everything else.
pub(crate) fn action_of<E: Entity>(name: &str) -> CryptoAction {
    if E::BOOKKEEPING_ATTRS.contains(&name) || name.starts_with(MARKER_PREFIX) {
        return CryptoAction::DoNothing;
    }
    match E::CRYPTO.iter().find(|f| f.attr == name).map(|f| f.action) {
        Some(Crypto::Encrypt) => CryptoAction::EncryptAndSign,
        _ => CryptoAction::SignOnly,
    }
}

/// The attribute actions of `E`'s items with the attributes of `item`, as the SDK's own
/// configuration takes them (`attribute_actions_on_encrypt`): for a program that encrypts or
/// decrypts `E`'s items with the SDK directly (its item encryptor, or its interceptor on an
/// `aws-sdk-dynamodb` client). The SDK's own attributes are left out.
pub fn attribute_actions<E: Entity>(item: &Item) -> HashMap<String, CryptoAction> {
    item.keys()
        .filter(|n| !SDK_ATTRS.contains(&n.as_str()))
        .map(|n| (n.clone(), action_of::<E>(n)))
        .collect()
}

fn sdk_error<E: Entity>(
    key: Option<String>,
    problem: EncryptionProblem,
    source: Box<dyn std::error::Error + Send + Sync + 'static>,
) -> Error {
    Error::Encryption { entity: E::NAME, key, problem, source: Some(source) }
}
