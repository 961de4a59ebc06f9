//! [`CaseInsensitive`]: a string key part whose keys ignore letter case.

use std::borrow::Cow;
use std::fmt;
use std::hash::{Hash, Hasher};

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::part::{KeyArg, KeyPart, KeyPartError};

/// A string whose key ignores letter case: its key text is the string in lower case (Unicode's
/// `to_lowercase`), so `"Ann"`, `"ANN"` and `"ann"` are one key, and one item. The value itself
/// keeps the case it was given, and is stored with it in its own attribute; two values are
/// equal (and hash alike) when their lower cases are.
///
/// What this means for an entity keyed by one (`#[entity(pk = "USER#<name>")]`):
/// - `User::get(&db, "ANN")` finds the item created as `"Ann"`;
/// - creating `"ann"` when `"Ann"` exists is `AlreadyExists`: the same key;
/// - reading the key back (`parse_key`) gives the lower case; a stored key with an upper-case
///   letter in that place was not written by this type and is `Error::KeyParse`.
///
/// ```
/// use ddb_model::KeyPart;
/// use ddb_model::key::CaseInsensitive;
///
/// let name = CaseInsensitive::from("Ann Lee");
/// assert_eq!(name.key_text(), "ann lee");
/// assert_eq!(name, CaseInsensitive::from("ANN LEE"));
/// assert_eq!(name.as_str(), "Ann Lee");
/// assert!(CaseInsensitive::from_key_text("Ann Lee").is_err()); // not a key text it writes
/// ```
#[derive(Clone, Default)]
pub struct CaseInsensitive(String);

impl CaseInsensitive {
    /// The value, in the case it was given.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The value, in the case it was given.
    pub fn into_inner(self) -> String {
        self.0
    }

    /// The key text: the value in lower case.
    pub fn folded(&self) -> Cow<'_, str> {
        fold(&self.0)
    }
}

/// `text` in lower case, borrowed when it is already.
fn fold(text: &str) -> Cow<'_, str> {
    if text.chars().any(char::is_uppercase) || !text.is_ascii() {
        let lower = text.to_lowercase();
        if lower != text {
            return Cow::Owned(lower);
        }
    }
    Cow::Borrowed(text)
}

impl KeyPart for CaseInsensitive {
    fn key_text(&self) -> Cow<'_, str> {
        fold(&self.0)
    }

    fn from_key_text(text: &str) -> Result<Self, KeyPartError> {
        if fold(text) == text {
            Ok(CaseInsensitive(text.to_owned()))
        } else {
            Err(KeyPartError::new::<Self>(text, "a case-insensitive key text is in lower case"))
        }
    }

    // `from_key_text` accepts only lower-case texts, which `key_text` writes back unchanged.
    const CANONICAL_PARSE: bool = true;

    // The key text is in lower case: an upsert stores the value in its own case.
    fn stored_text(&self) -> Option<&str> {
        Some(&self.0)
    }
}

impl KeyArg<CaseInsensitive> for &str {
    fn arg_key_text(&self) -> Cow<'_, str> {
        fold(self)
    }
    fn arg_stored_text(&self) -> Option<Cow<'_, str>> {
        Some(Cow::Borrowed(self))
    }
}

impl KeyArg<CaseInsensitive> for String {
    fn arg_key_text(&self) -> Cow<'_, str> {
        fold(self)
    }
    fn arg_stored_text(&self) -> Option<Cow<'_, str>> {
        Some(Cow::Borrowed(self))
    }
}

impl PartialEq for CaseInsensitive {
    fn eq(&self, other: &Self) -> bool {
        self.folded() == other.folded()
    }
}

impl Eq for CaseInsensitive {}

impl Hash for CaseInsensitive {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.folded().hash(state);
    }
}

impl fmt::Debug for CaseInsensitive {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

impl fmt::Display for CaseInsensitive {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<&str> for CaseInsensitive {
    fn from(value: &str) -> Self {
        CaseInsensitive(value.to_owned())
    }
}

impl From<String> for CaseInsensitive {
    fn from(value: String) -> Self {
        CaseInsensitive(value)
    }
}

impl Serialize for CaseInsensitive {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for CaseInsensitive {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer).map(CaseInsensitive)
    }
}
