//! Keys: [`KeyPart`] values, the template runtime used by generated code, and [`Key<E>`].
//!
//! # Key templates
//!
//! A template is literal text and `<field>` placeholders. The rules, all checked at compile
//! time: the template is not empty; every placeholder names a stored field whose type
//! implements [`KeyPart`] (for an index key, `Option` of one: the item is left out of the index
//! when it is `None`); two placeholders have text between them, and the text after a
//! placeholder starts with a separator, one of `# / | ~ :`.
//!
//! At run time, each value's text has `%` and the separators escaped (`a#b` is written
//! `a%23b`). A value can therefore never contain a raw separator: keys are injective, keys
//! parse back unambiguously, and a prefix ending at a separator is component-exact.
//! Integers are written at a fixed width per type (`u32` 7 is `0000000007`; negatives start
//! with `-` and an offset) so that byte order is numeric order.

mod part;

use std::fmt;
use std::hash::{Hash, Hasher};
use std::marker::PhantomData;

pub use crate::escape::{ESCAPE, SEPARATORS, UnescapeError, escape_into, is_separator, unescape};
pub use part::{IndexArg, IndexKeyPart, KeyArg, KeyPart, KeyPartError};
#[doc(hidden)]
pub use part::{KeyPartFns, index_key_text, key_part};

pub(crate) use crate::error::display_key;
use crate::error::{Error, KeyProblem};

/// Largest partition key DynamoDB accepts, in UTF-8 bytes.
pub const MAX_PARTITION_KEY_BYTES: usize = 2048;
/// Largest sort key DynamoDB accepts, in UTF-8 bytes.
pub const MAX_SORT_KEY_BYTES: usize = 1024;

/// The primary key of one item of entity `E`: the encoded partition key and, when the table
/// has one, the encoded sort key.
///
/// Built by the generated `E::key(..)` constructor (from key field values) or by `e.key()`
/// (from an entity value). The type parameter keeps a `Key<User>` from being used to read a
/// `Post`.
pub struct Key<E> {
    pk: String,
    sk: Option<String>,
    _entity: PhantomData<fn() -> E>,
}

impl<E> Key<E> {
    #[doc(hidden)]
    pub fn from_parts(pk: String, sk: Option<String>) -> Self {
        Key { pk, sk, _entity: PhantomData }
    }

    /// The encoded partition key.
    pub fn pk(&self) -> &str {
        &self.pk
    }

    /// The encoded sort key, if the table has one.
    pub fn sk(&self) -> Option<&str> {
        self.sk.as_deref()
    }
}

// `Key::validate`, which needs the entity's table, is implemented in the model layer.

/// Checks one key attribute value against the DynamoDB limits.
pub(crate) fn check_key_value(
    entity: &'static str,
    attribute: &str,
    value: &str,
    max: usize,
) -> Result<(), Error> {
    let problem = if value.is_empty() {
        KeyProblem::Empty
    } else if value.len() > max {
        KeyProblem::TooLong { len: value.len(), max }
    } else {
        return Ok(());
    };
    Err(Error::InvalidKey { entity, attribute: attribute.to_owned(), problem })
}

impl<E> Clone for Key<E> {
    fn clone(&self) -> Self {
        Key { pk: self.pk.clone(), sk: self.sk.clone(), _entity: PhantomData }
    }
}

impl<E> PartialEq for Key<E> {
    fn eq(&self, other: &Self) -> bool {
        self.pk == other.pk && self.sk == other.sk
    }
}

impl<E> Eq for Key<E> {}

impl<E> Hash for Key<E> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.pk.hash(state);
        self.sk.hash(state);
    }
}

impl<E> fmt::Debug for Key<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Key").field("pk", &self.pk).field("sk", &self.sk).finish()
    }
}

impl<E> fmt::Display for Key<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        display_key(f, &self.pk, self.sk.as_deref())
    }
}

/// Builds one key string from literal runs and escaped placeholder values. Used by generated
/// code.
#[doc(hidden)]
pub struct KeyWriter {
    buf: String,
}

impl KeyWriter {
    #[inline]
    pub fn with_capacity(capacity: usize) -> Self {
        KeyWriter { buf: String::with_capacity(capacity) }
    }

    #[inline]
    pub fn lit(&mut self, text: &str) {
        self.buf.push_str(text);
    }

    #[inline]
    pub fn part(&mut self, text: &str) {
        escape_into(text, &mut self.buf);
    }

    #[inline]
    pub fn finish(self) -> String {
        self.buf
    }
}

/// Reads a key string back into its placeholder values, following the template. Used by the
/// generated `parse_key`.
#[doc(hidden)]
pub struct KeyReader<'a> {
    entity: &'static str,
    attribute: &'static str,
    template: &'static str,
    input: &'a str,
    pos: usize,
}

impl<'a> KeyReader<'a> {
    #[inline]
    pub fn new(
        entity: &'static str,
        attribute: &'static str,
        template: &'static str,
        input: &'a str,
    ) -> Self {
        KeyReader { entity, attribute, template, input, pos: 0 }
    }

    #[cold]
    fn error(&self, reason: String) -> Error {
        Error::KeyParse {
            entity: self.entity,
            attribute: self.attribute,
            template: self.template,
            input: self.input.to_owned(),
            reason,
        }
    }

    /// Consumes a literal run of the template.
    #[inline]
    pub fn lit(&mut self, lit: &str) -> Result<(), Error> {
        if self.input[self.pos..].starts_with(lit) {
            self.pos += lit.len();
            Ok(())
        } else {
            Err(self.error(format!("expected `{lit}` at byte {}", self.pos)))
        }
    }

    /// Reads one placeholder value, which ends at `until` (the first character of the next
    /// literal, always a separator) or at the end of the input.
    pub fn part<T>(
        &mut self,
        field: &str,
        until: Option<char>,
        fns: KeyPartFns<T>,
    ) -> Result<T, Error> {
        let rest = &self.input[self.pos..];
        let len = match until {
            Some(c) => rest.find(c).unwrap_or(rest.len()),
            None => rest.len(),
        };
        let raw = &rest[..len];
        let text = unescape(raw).map_err(|e| self.error(format!("field `{field}`: {e}")))?;
        let value =
            (fns.from_key_text)(&text).map_err(|e| self.error(format!("field `{field}`: {e}")))?;
        // A type whose parser accepts only the texts it writes needs no re-encoding to prove
        // the text canonical; any other type's value is written again and compared.
        if !fns.canonical && (fns.key_text)(&value) != text {
            return Err(self.error(format!(
                "field `{field}`: `{text}` is not the canonical key text of {}",
                std::any::type_name::<T>()
            )));
        }
        self.pos += len;
        Ok(value)
    }

    /// Reads a second occurrence of a placeholder and checks it equals the first.
    pub fn repeated<T>(
        &mut self,
        field: &str,
        until: Option<char>,
        fns: KeyPartFns<T>,
        first: &T,
    ) -> Result<(), Error> {
        let again: T = self.part(field, until, fns)?;
        let (first, again) = ((fns.key_text)(first), (fns.key_text)(&again));
        if first == again {
            Ok(())
        } else {
            Err(self.error(format!(
                "field `{field}` appears twice with different values `{first}` and `{again}`"
            )))
        }
    }

    /// The error for a sort key that is missing.
    pub fn missing(entity: &'static str, attribute: &'static str, template: &'static str) -> Error {
        Error::KeyParse {
            entity,
            attribute,
            template,
            input: String::new(),
            reason: "the sort key is missing".to_owned(),
        }
    }

    /// Checks that the whole input was consumed.
    #[inline]
    pub fn end(self) -> Result<(), Error> {
        if self.pos == self.input.len() {
            Ok(())
        } else {
            Err(self.error(format!("unexpected text after byte {}", self.pos)))
        }
    }
}
