//! Keys: [`KeyPart`] values, the template runtime (`template`: every key the crate writes,
//! for entities, indexes, edges and trees), and [`Key<E>`].
//!
//! # Key templates
//!
//! A template is literal text and `<field>` placeholders. The rules, all checked at compile
//! time: the template is not empty; every placeholder names a stored field whose type
//! implements [`KeyPart`] (for an index key, `Option` of one: the item is left out of the index
//! when it is `None`); two placeholders have text between them, and the text after a
//! placeholder starts with a separator, one of `# / | ~ :`, or with a character the field's
//! type never writes (below).
//!
//! At run time, each value's text has `%` and the separators escaped (`a#b` is written
//! `a%23b`). A value can therefore never contain a raw separator: keys are injective, keys
//! parse back unambiguously, and a prefix ending at a separator is component-exact.
//! Integers are written at a fixed width per type (`u32` 7 is `0000000007`; negatives start
//! with `-` and an offset) so that byte order is numeric order.
//!
//! # A literal directly after a placeholder
//!
//! Where the field's key text is written from a closed set of characters,
//! [`KeyPart::KEY_CHARS`], the text after its placeholder may start with any character
//! outside that set: the value ends at that character, exactly as it ends at a separator.
//!
//! | key type | writes only | may be followed directly by |
//! | --- | --- | --- |
//! | `u8` .. `u128`, `usize` | `0-9` | any character but the digits |
//! | `i8` .. `i128`, `isize` | `-`, `0-9` | any but `-` and the digits |
//! | `bool` | the letters of `true`, `false` | any but `a e f l r s t u` |
//! | `uuid::Uuid` | `0-9`, `a-f`, `-` | any but those (`G`, `x`, `_`, ...) |
//! | `chrono::DateTime<Utc>` | `0-9`, `T`, `Z`, `.`, `+`, `-` | any but those |
//! | `chrono::NaiveDate` | `0-9`, `+`, `-` | any but those |
//! | `String`, `char`, composites, your types by default | anything | a separator only |
//!
//! So `"ORDER#<seq>x<item>"` with `seq: u32` reads back exactly, and the prefix of a query
//! of `seq = 5` (`ORDER#0000000005x`) matches no other `seq`. The escape character `%` never
//! follows an escaped placeholder. Anything else is a compile error at the placeholder that
//! names the characters the type writes. A [`KeyPart`] of your own may declare its set
//! (a number written in as few digits as it needs: `KeyChars::Only("0123456789")`); a value
//! whose text holds the character after its placeholder anyway is refused before any write
//! with [`KeyProblem::Ambiguous`](crate::error::KeyProblem), never stored.
//!
//! # Verbatim placeholders
//!
//! For a table whose keys other code wrote without escapes, a placeholder can be marked
//! `<path:verbatim>`: its value's text goes into the key as it is (`/V/d/` stays `/V/d/`).
//! The literal after a verbatim placeholder may be any text. A value holding the first
//! character of that literal would read back as other values (`<org:verbatim>#<id>` with the
//! org `a#b`): every operation refuses such a key with [`Error::InvalidKey`](crate::Error)
//! ([`KeyProblem::Ambiguous`](crate::error::KeyProblem)) before sending anything, and so does a
//! query given such a value, range bound or prefix. A verbatim value at the end of a
//! template can hold anything. Ranges on a verbatim level compare the values' own text.

mod case;
mod composite;
mod format;
mod part;
mod template;

use std::fmt;

use crate::error::KeyProblem;
use std::hash::{Hash, Hasher};
use std::marker::PhantomData;

pub use crate::escape::{ESCAPE, SEPARATORS, UnescapeError, escape_into, is_separator, unescape};
pub use case::CaseInsensitive;
pub use composite::COMPONENT_SEPARATOR;
#[doc(hidden)]
pub use composite::{push_component, split_components, split_variant};
pub use part::{IndexArg, IndexKeyPart, KeyArg, KeyChars, KeyPart, KeyPartError};
#[doc(hidden)]
pub use part::{KeyPartFns, index_key_text, key_part};

pub use format::Precision;
#[doc(hidden)]
pub use format::{
    Case, CaseKey, IntKind, Iso8601Key, KeyFormat, UnpaddedKey, iso8601, text as text_format,
    unpadded,
};
#[doc(hidden)]
pub use template::{
    Escaped, KeyReader, KeySeg, KeyTemplate, PartText, formatted, lit, part, verbatim,
};
pub use template::{MAX_PARTITION_KEY_BYTES, MAX_SORT_KEY_BYTES};

pub(crate) use crate::error::display_key;
pub(crate) use template::check_key_value;

/// The primary key of one item of entity `E`: the encoded partition key and, when the table
/// has one, the encoded sort key.
///
/// Built by the generated `E::key(..)` constructor (from key field values) or by `e.key()`
/// (from an entity value). The type parameter keeps a `Key<User>` from being used to read a
/// `Post`.
pub struct Key<E> {
    pk: String,
    sk: Option<String>,
    /// Why the key cannot be used (a verbatim part that would read back differently), found
    /// when it was built; [`Key::validate`] reports it before anything is sent.
    refused: Option<Box<Refused>>,
    _entity: PhantomData<fn() -> E>,
}

/// A problem found while a key was built, reported by `Key::validate`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Refused {
    /// True for the sort key, false for the partition key.
    pub in_sk: bool,
    pub problem: KeyProblem,
}

impl<E> Key<E> {
    #[doc(hidden)]
    pub fn from_parts(pk: String, sk: Option<String>) -> Self {
        Key { pk, sk, refused: None, _entity: PhantomData }
    }

    /// The key, marked unusable: `validate` reports `problem` (in the sort key when
    /// `in_sk`) instead of letting it be sent.
    #[doc(hidden)]
    #[cold]
    pub fn refused(mut self, in_sk: bool, problem: KeyProblem) -> Self {
        self.refused = Some(Box::new(Refused { in_sk, problem }));
        self
    }

    /// The problem found when the key was built, if any.
    pub(crate) fn refusal(&self) -> Option<&Refused> {
        self.refused.as_deref()
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

impl<E> Clone for Key<E> {
    fn clone(&self) -> Self {
        Key {
            pk: self.pk.clone(),
            sk: self.sk.clone(),
            refused: self.refused.clone(),
            _entity: PhantomData,
        }
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
