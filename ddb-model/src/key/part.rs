//! [`KeyPart`]: how a field value becomes one component of a key, and back.

use std::borrow::Cow;

/// A value that can fill a `<placeholder>` of a key template.
///
/// An implementation turns the value into text and reads it back. The text does not need to
/// avoid separators: the key runtime escapes `# / | ~ :` and `%` around it, so any text is safe.
/// What an implementation must guarantee is that different values give different texts and
/// that [`KeyPart::from_key_text`] accepts exactly the texts [`KeyPart::key_text`] produces
/// (the runtime re-encodes every parsed value and rejects a text that does not round-trip).
///
/// Implemented for `String`, `bool`, `char`, every integer type, and, behind the `uuid` and
/// `chrono` features, `uuid::Uuid`, `chrono::DateTime<Utc>` and `chrono::NaiveDate`.
/// Integers use fixed-width decimal text whose byte order is their numeric order, negatives
/// included, so sort keys built from numbers sort numerically.
///
/// `#[derive(KeyPart)]` writes the implementation for a newtype (its field's text), a
/// field-less enum (the variant's name, changed by one of serde's rules in
/// `#[key_part(rename_all = "..")]` on the enum, or by `#[key_part(rename = "..")]` on the
/// variant, which wins), a struct of several
/// fields and an enum with data. The last two are composites: the components' texts joined
/// by `.`, each with `%` and `.` escaped (`%25`, `%2E`), so any values read back; a variant
/// with data starts with its name. Composite texts sort by that text, component after
/// component; a key of a repository owned by `alice` and named `app` reads `REPO#alice.app`.
///
/// ```
/// use ddb_model::KeyPart;
///
/// #[derive(KeyPart, Debug, PartialEq)]
/// struct OrderId(u64);
///
/// #[derive(KeyPart, Debug, PartialEq)]
/// enum Status { Open, Closed }
///
/// #[derive(KeyPart, Debug, PartialEq)]
/// #[key_part(rename_all = "snake_case")]
/// enum Stage { InReview, #[key_part(rename = "done")] Shipped }
///
/// #[derive(KeyPart, Debug, PartialEq)]
/// struct RepoId { owner: String, name: String }
///
/// #[derive(KeyPart, Debug, PartialEq)]
/// enum Owner { User(String), Org { name: String, seat: u16 } }
///
/// assert_eq!(OrderId(42).key_text(), "00000000000000000042");
/// assert_eq!(Status::from_key_text("Closed").unwrap(), Status::Closed);
/// assert_eq!(Stage::InReview.key_text(), "in_review");
/// assert_eq!(Stage::from_key_text("done").unwrap(), Stage::Shipped);
/// let id = RepoId { owner: "alice".into(), name: "web.site".into() };
/// assert_eq!(id.key_text(), "alice.web%2Esite");
/// assert_eq!(RepoId::from_key_text("alice.web%2Esite").unwrap(), id);
/// assert_eq!(Owner::User("ann".into()).key_text(), "User.ann");
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot fill a key template placeholder",
    label = "used in a key, so it must implement `ddb_model::KeyPart`",
    note = "`KeyPart` is implemented for String, bool, char and the integer types (uuid and chrono types behind features)",
    note = "for your own struct or enum, add `#[derive(ddb_model::KeyPart)]`; a primary key field cannot be an `Option`"
)]
pub trait KeyPart: Sized {
    /// The value's text inside the key, before escaping.
    fn key_text(&self) -> Cow<'_, str>;

    /// Reads a value back from its (unescaped) key text.
    fn from_key_text(text: &str) -> Result<Self, KeyPartError>;

    /// True when [`from_key_text`](KeyPart::from_key_text) accepts only texts that
    /// [`key_text`](KeyPart::key_text) writes. Key parsing then skips re-encoding each parsed
    /// value to prove its text canonical. Leave it `false` (the default) unless that is
    /// certain: a wrong `true` lets two texts parse to one value.
    #[doc(hidden)]
    const CANONICAL_PARSE: bool = false;

    /// The characters [`key_text`](KeyPart::key_text) may write: [`KeyChars::Any`] (the
    /// default), or [`KeyChars::Only`] a set of ASCII characters. A placeholder of a type
    /// with a closed set may be followed directly by a literal that starts with a character
    /// outside the set (`"ORDER#<seq>x<item>"` with `seq: u32`): the key is still read back
    /// exactly, since the value ends at that character. Declare only what `key_text` can
    /// never break: a key whose value holds that character is refused before it is written
    /// ([`KeyProblem::Ambiguous`](crate::error::KeyProblem)).
    ///
    /// ```
    /// use ddb_model::KeyPart;
    /// use ddb_model::key::KeyChars;
    ///
    /// assert_eq!(<u32 as KeyPart>::KEY_CHARS, KeyChars::Only("0123456789"));
    /// assert_eq!(<i32 as KeyPart>::KEY_CHARS, KeyChars::Only("-0123456789"));
    /// assert_eq!(<String as KeyPart>::KEY_CHARS, KeyChars::Any);
    /// assert!(KeyChars::Only("0123456789").may_follow('x'));
    /// assert!(!KeyChars::Only("0123456789").may_follow('7'));
    /// assert!(!KeyChars::Any.may_follow('x'));
    /// assert!(KeyChars::Any.may_follow('#'), "a separator follows any placeholder");
    /// ```
    const KEY_CHARS: KeyChars = KeyChars::Any;

    /// The text the value is stored as (serde's string) when its key text keeps less of it,
    /// so that the value read back from the key is not the value given
    /// ([`CaseInsensitive`](crate::key::CaseInsensitive): the case). An upsert writes this to
    /// the key field of the item it creates. `None` (the default): the value read back from
    /// the key text is stored.
    #[doc(hidden)]
    fn stored_text(&self) -> Option<&str> {
        None
    }
}

/// The characters a [`KeyPart`]'s key text may hold ([`KeyPart::KEY_CHARS`]), which decide
/// the literals that may follow its placeholder directly.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyChars {
    /// Any character.
    Any,
    /// Only these ASCII characters.
    Only(&'static str),
}

impl KeyChars {
    /// True when the escaped key text of a value (what a placeholder writes) may hold `c`.
    /// Escaping writes `%` and upper-case hex digits for a reserved character, and never
    /// leaves a separator raw; `%` counts as held by every type.
    pub const fn may_hold(self, c: char) -> bool {
        if crate::escape::is_separator(c) {
            return false;
        }
        // Escaped text holds `%` wherever it escapes; never end a value at it.
        if c == crate::escape::ESCAPE {
            return true;
        }
        match self {
            KeyChars::Any => true,
            KeyChars::Only(set) => {
                let hex = matches!(c, '0'..='9' | 'A'..='F');
                holds(set, c) || (hex && has_reserved(set))
            }
        }
    }

    /// True when a literal that starts with `c` may follow a placeholder of these
    /// characters: the value's escaped text never holds `c`, so `c` ends it.
    pub const fn may_follow(self, c: char) -> bool {
        !self.may_hold(c)
    }
}

/// `set` holds the ASCII character `c`.
const fn holds(set: &str, c: char) -> bool {
    let bytes = set.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] as u32 == c as u32 {
            return true;
        }
        i += 1;
    }
    false
}

/// `set` holds a character that escaping rewrites.
const fn has_reserved(set: &str) -> bool {
    holds(set, '%')
        || holds(set, '#')
        || holds(set, '/')
        || holds(set, '|')
        || holds(set, '~')
        || holds(set, ':')
}

pub use crate::error::KeyPartError;

/// A value a generated key constructor accepts for a placeholder of type `T`: the value, a
/// reference to it, or for `String` fields a `&str`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be used for a key placeholder of type `{T}`",
    label = "expected `{T}`, a reference to it, or `&str` for a String placeholder"
)]
pub trait KeyArg<T> {
    /// The key text of the value, before escaping.
    fn arg_key_text(&self) -> Cow<'_, str>;

    /// The text the field stores for this value when the key text keeps less of it (see
    /// [`KeyPart::stored_text`]); `None` (the default): the value read back from the key.
    #[doc(hidden)]
    fn arg_stored_text(&self) -> Option<Cow<'_, str>> {
        None
    }
}

impl<T: KeyPart> KeyArg<T> for T {
    fn arg_key_text(&self) -> Cow<'_, str> {
        KeyPart::key_text(self)
    }
    fn arg_stored_text(&self) -> Option<Cow<'_, str>> {
        self.stored_text().map(Cow::Borrowed)
    }
}

impl<T: KeyPart> KeyArg<T> for &T {
    fn arg_key_text(&self) -> Cow<'_, str> {
        KeyPart::key_text(*self)
    }
    fn arg_stored_text(&self) -> Option<Cow<'_, str>> {
        (*self).stored_text().map(Cow::Borrowed)
    }
}

impl KeyArg<String> for &str {
    fn arg_key_text(&self) -> Cow<'_, str> {
        Cow::Borrowed(self)
    }
}

impl KeyArg<String> for &mut str {
    fn arg_key_text(&self) -> Cow<'_, str> {
        Cow::Borrowed(self)
    }
}

impl KeyArg<String> for Box<str> {
    fn arg_key_text(&self) -> Cow<'_, str> {
        Cow::Borrowed(self)
    }
}

impl KeyArg<String> for Cow<'_, str> {
    fn arg_key_text(&self) -> Cow<'_, str> {
        Cow::Borrowed(self)
    }
}

/// A field that may fill a placeholder of a secondary-index key: a [`KeyPart`] or an
/// `Option` of one. When the option is `None` the item is left out of that index (a sparse
/// index).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot fill an index key placeholder",
    label = "this field is used in an index key template, so its type must implement `ddb_model::KeyPart` (or be an `Option` of one)",
    note = "for your own struct or enum, add `#[derive(ddb_model::KeyPart)]`"
)]
pub trait IndexKeyPart {
    /// The key part type inside.
    type Part: KeyPart;
    /// The value, or `None` when the item is not in the index.
    fn index_part(&self) -> Option<&Self::Part>;
    /// True for an `Option`: a value may leave the item out of the index.
    const OPTIONAL: bool = false;
}

impl<T: KeyPart> IndexKeyPart for T {
    type Part = T;
    fn index_part(&self) -> Option<&T> {
        Some(self)
    }
}

impl<T: KeyPart> IndexKeyPart for Option<T> {
    type Part = T;
    const OPTIONAL: bool = true;
    fn index_part(&self) -> Option<&T> {
        self.as_ref()
    }
}

/// A value that may fill an index key placeholder whose field has type `F` (a [`KeyPart`] or
/// an `Option` of one): what a [`KeyArg`] is for primary keys. Used by the generated index
/// query constructors.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be used for an index key placeholder of type `{F}`",
    label = "expected the field's key type, a reference to it, or `&str` for a String placeholder"
)]
pub trait IndexArg<F> {
    /// The key text of the value, before escaping.
    fn index_arg_text(&self) -> Cow<'_, str>;
}

impl<F: IndexKeyPart, A: KeyArg<F::Part>> IndexArg<F> for A {
    fn index_arg_text(&self) -> Cow<'_, str> {
        self.arg_key_text()
    }
}

/// The [`KeyPart`] functions of `T`. Generated code reaches every field type's `KeyPart`
/// impl through [`key_part`], so a field type without one is reported once, at the field.
#[doc(hidden)]
pub struct KeyPartFns<T> {
    pub key_text: for<'a> fn(&'a T) -> Cow<'a, str>,
    pub from_key_text: fn(&str) -> Result<T, KeyPartError>,
    /// [`KeyPart::CANONICAL_PARSE`].
    pub canonical: bool,
}

impl<T> Clone for KeyPartFns<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for KeyPartFns<T> {}

#[doc(hidden)]
pub const fn key_part<T: KeyPart>() -> KeyPartFns<T> {
    KeyPartFns {
        key_text: T::key_text,
        from_key_text: T::from_key_text,
        canonical: T::CANONICAL_PARSE,
    }
}

fn index_text<T: IndexKeyPart>(value: &T) -> Option<Cow<'_, str>> {
    value.index_part().map(KeyPart::key_text)
}

/// The key text of an index key field, `None` when the field is an empty `Option`.
#[doc(hidden)]
pub const fn index_key_text<T: IndexKeyPart>() -> for<'a> fn(&'a T) -> Option<Cow<'a, str>> {
    index_text::<T>
}

impl KeyPart for String {
    fn key_text(&self) -> Cow<'_, str> {
        Cow::Borrowed(self)
    }
    fn from_key_text(text: &str) -> Result<Self, KeyPartError> {
        Ok(text.to_owned())
    }
    const CANONICAL_PARSE: bool = true;
}

impl KeyPart for bool {
    fn key_text(&self) -> Cow<'_, str> {
        Cow::Borrowed(if *self { "true" } else { "false" })
    }
    fn from_key_text(text: &str) -> Result<Self, KeyPartError> {
        match text {
            "true" => Ok(true),
            "false" => Ok(false),
            _ => Err(KeyPartError::new::<bool>(text, "expected `true` or `false`")),
        }
    }
    const CANONICAL_PARSE: bool = true;
    const KEY_CHARS: KeyChars = KeyChars::Only("aeflrstu");
}

impl KeyPart for char {
    fn key_text(&self) -> Cow<'_, str> {
        Cow::Owned(self.to_string())
    }
    fn from_key_text(text: &str) -> Result<Self, KeyPartError> {
        let mut chars = text.chars();
        match (chars.next(), chars.next()) {
            (Some(c), None) => Ok(c),
            _ => Err(KeyPartError::new::<char>(text, "expected exactly one character")),
        }
    }
    const CANONICAL_PARSE: bool = true;
}

/// Number of decimal digits of `n` (1 for 0).
const fn digits(mut n: u128) -> usize {
    let mut d = 1;
    while n >= 10 {
        n /= 10;
        d += 1;
    }
    d
}

fn parse_fixed_digits(text: &str, width: usize) -> Option<u128> {
    if text.len() != width || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    // Up to 20 digits fit u64 arithmetic unless the value exceeds u64::MAX.
    let mut v = 0u64;
    for b in text.bytes() {
        match v.checked_mul(10).and_then(|v| v.checked_add(u64::from(b - b'0'))) {
            Some(next) => v = next,
            None => return text.parse::<u128>().ok(),
        }
    }
    Some(u128::from(v))
}

/// `prefix` followed by `v` in exactly `width` decimal digits, zero-padded (`v` has at most
/// `width` digits). What `format!("{prefix}{v:0width$}")` writes, without the formatting
/// machinery for values that fit in a `u64`.
fn fixed_digits(prefix: &str, v: u128, width: usize) -> String {
    let Ok(mut v) = u64::try_from(v) else {
        return format!("{prefix}{v:0width$}");
    };
    let mut buf = [b'0'; 40];
    let start = buf.len().saturating_sub(width);
    let mut i = buf.len();
    while v > 0 && i > 0 {
        i -= 1;
        buf[i] = b'0' + (v % 10) as u8;
        v /= 10;
    }
    let mut out = String::with_capacity(prefix.len() + width);
    out.push_str(prefix);
    // Only ASCII digits were written.
    out.push_str(std::str::from_utf8(&buf[start..]).unwrap_or_default());
    out
}

macro_rules! unsigned_key_part {
    ($($t:ty),*) => {$(
        impl KeyPart for $t {
            fn key_text(&self) -> Cow<'_, str> {
                const WIDTH: usize = digits(<$t>::MAX as u128);
                Cow::Owned(fixed_digits("", *self as u128, WIDTH))
            }
            fn from_key_text(text: &str) -> Result<Self, KeyPartError> {
                const WIDTH: usize = digits(<$t>::MAX as u128);
                parse_fixed_digits(text, WIDTH)
                    .and_then(|v| <$t>::try_from(v).ok())
                    .ok_or_else(|| KeyPartError::new::<$t>(
                        text,
                        format!("expected exactly {WIDTH} decimal digits"),
                    ))
            }
            // Exactly WIDTH digits, no sign: one text per value.
            const CANONICAL_PARSE: bool = true;
            const KEY_CHARS: KeyChars = KeyChars::Only("0123456789");
        }
    )*};
}

macro_rules! signed_key_part {
    ($($t:ty => $u:ty),*) => {$(
        // Non-negative values: `MAX`-width zero-padded digits. Negative values: `-` and then
        // `value - MIN` with the same width. `-` sorts before every digit and `value - MIN`
        // grows with `value`, so byte order is numeric order.
        impl KeyPart for $t {
            fn key_text(&self) -> Cow<'_, str> {
                const WIDTH: usize = digits(<$t>::MAX as u128);
                if *self >= 0 {
                    Cow::Owned(fixed_digits("", *self as u128, WIDTH))
                } else {
                    let offset = (*self as $u).wrapping_sub(<$t>::MIN as $u);
                    Cow::Owned(fixed_digits("-", offset as u128, WIDTH))
                }
            }
            fn from_key_text(text: &str) -> Result<Self, KeyPartError> {
                const WIDTH: usize = digits(<$t>::MAX as u128);
                let bad = || KeyPartError::new::<$t>(
                    text,
                    format!("expected {WIDTH} decimal digits, or `-` and {WIDTH} digits"),
                );
                match text.strip_prefix('-') {
                    None => parse_fixed_digits(text, WIDTH)
                        .and_then(|v| <$t>::try_from(v).ok())
                        .ok_or_else(bad),
                    Some(rest) => {
                        let offset = parse_fixed_digits(rest, WIDTH)
                            .and_then(|v| <$u>::try_from(v).ok())
                            .filter(|v| *v <= <$t>::MAX as $u)
                            .ok_or_else(bad)?;
                        Ok(<$t>::MIN.wrapping_add(offset as $t))
                    }
                }
            }
            // WIDTH digits, or `-` and WIDTH digits of an offset below the value range's
            // size: one text per value.
            const CANONICAL_PARSE: bool = true;
            const KEY_CHARS: KeyChars = KeyChars::Only("-0123456789");
        }
    )*};
}

unsigned_key_part!(u8, u16, u32, u64, u128, usize);
signed_key_part!(i8 => u8, i16 => u16, i32 => u32, i64 => u64, i128 => u128, isize => usize);

/// A tree path in a key is its text form (escaped once more by the key writer, so a path is
/// one key component whatever it holds).
impl KeyPart for crate::error::TreePath {
    fn key_text(&self) -> Cow<'_, str> {
        Cow::Owned(self.to_text())
    }

    fn from_key_text(text: &str) -> Result<Self, KeyPartError> {
        crate::error::TreePath::parse(text)
            .map_err(|e| KeyPartError::new::<Self>(text, e.to_string()))
    }
}

#[cfg(feature = "uuid")]
impl KeyPart for uuid::Uuid {
    fn key_text(&self) -> Cow<'_, str> {
        Cow::Owned(self.hyphenated().to_string())
    }
    fn from_key_text(text: &str) -> Result<Self, KeyPartError> {
        uuid::Uuid::try_parse(text)
            .map_err(|e| KeyPartError::new::<uuid::Uuid>(text, e.to_string()))
    }
    // Hyphenated lower case: other spellings parse, and are refused as not canonical.
    const KEY_CHARS: KeyChars = KeyChars::Only("-0123456789abcdef");
}

/// `YYYYMMDDTHHMMSS.nnnnnnnnnZ`: fixed width (for years 0 to 9999), sorts chronologically,
/// and has no `:` so it needs no escaping.
#[cfg(feature = "chrono")]
impl KeyPart for chrono::DateTime<chrono::Utc> {
    fn key_text(&self) -> Cow<'_, str> {
        Cow::Owned(self.format("%Y%m%dT%H%M%S%.9fZ").to_string())
    }
    fn from_key_text(text: &str) -> Result<Self, KeyPartError> {
        chrono::NaiveDateTime::parse_from_str(text, "%Y%m%dT%H%M%S%.9fZ")
            .map(|naive| naive.and_utc())
            .map_err(|e| KeyPartError::new::<Self>(text, e.to_string()))
    }
    // Years outside 0..=9999 carry a sign.
    const KEY_CHARS: KeyChars = KeyChars::Only("+-.0123456789TZ");
}

/// `YYYY-MM-DD`.
#[cfg(feature = "chrono")]
impl KeyPart for chrono::NaiveDate {
    fn key_text(&self) -> Cow<'_, str> {
        Cow::Owned(self.format("%Y-%m-%d").to_string())
    }
    fn from_key_text(text: &str) -> Result<Self, KeyPartError> {
        chrono::NaiveDate::parse_from_str(text, "%Y-%m-%d")
            .map_err(|e| KeyPartError::new::<Self>(text, e.to_string()))
    }
    const KEY_CHARS: KeyChars = KeyChars::Only("+-0123456789");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_widths_follow_the_type() {
        assert_eq!(7u8.key_text(), "007");
        assert_eq!(7u64.key_text(), "00000000000000000007");
        assert_eq!(0i32.key_text(), "0000000000");
        assert_eq!((-1i32).key_text(), "-2147483647");
        assert_eq!(i32::MIN.key_text(), "-0000000000");
        assert_eq!(i8::MAX.key_text(), "127");
        assert_eq!(u128::MAX.key_text().len(), 39);
    }

    #[test]
    fn integer_texts_are_what_format_writes() {
        fn check<T: KeyPart + Copy + std::fmt::Display>(
            values: &[T],
            expected: impl Fn(T) -> String,
        ) {
            for &v in values {
                assert_eq!(v.key_text(), expected(v), "{v}");
                assert_eq!(
                    T::from_key_text(&v.key_text()).ok().map(|p| p.key_text().into_owned()),
                    Some(expected(v))
                );
            }
        }
        check(&[0u8, 7, 255], |v| format!("{v:03}"));
        check(&[0u64, 1, 4242, u64::MAX / 10, u64::MAX], |v| format!("{v:020}"));
        check(&[0u128, 7, u128::from(u64::MAX) + 1, u128::MAX], |v| format!("{v:039}"));
        check(&[0usize, 9, usize::MAX], |v| format!("{v:020}"));
        check(&[i64::MIN, -1, 0, 1, i64::MAX], |v| {
            if v >= 0 {
                format!("{v:019}")
            } else {
                format!("-{:019}", (v as u64).wrapping_sub(i64::MIN as u64))
            }
        });
        check(&[i128::MIN, -1, 0, i128::MAX], |v| {
            if v >= 0 {
                format!("{v:039}")
            } else {
                format!("-{:039}", (v as u128).wrapping_sub(i128::MIN as u128))
            }
        });
    }

    /// Every type that claims `CANONICAL_PARSE` writes back exactly the text it parsed.
    #[test]
    fn canonical_parsers_round_trip_their_texts() {
        fn check<T: KeyPart>(texts: &[&str]) {
            assert!(T::CANONICAL_PARSE);
            for text in texts {
                if let Ok(value) = T::from_key_text(text) {
                    assert_eq!(value.key_text(), *text, "{}", std::any::type_name::<T>());
                }
            }
        }
        // Comma-separated, the first text empty.
        let texts: Vec<&str> =
            ",0,7,007,-007,+07,-128,-127,-000,127,255,256,0000000007,-2147483647,-0000000000,\
             2147483647,4294967295,true,false,TRUE,a,ab,é, 7"
                .split(',')
                .collect();
        check::<u8>(&texts);
        check::<i8>(&texts);
        check::<u32>(&texts);
        check::<i32>(&texts);
        check::<u64>(&texts);
        check::<i64>(&texts);
        check::<bool>(&texts);
        check::<char>(&texts);
        check::<String>(&texts);
    }

    #[test]
    fn integer_parse_is_strict() {
        assert!(u8::from_key_text("7").is_err());
        assert!(u8::from_key_text("256").is_err());
        assert!(u8::from_key_text("+07").is_err());
        assert!(i8::from_key_text("-128").is_err(), "offset 128 exceeds i8::MAX");
        assert_eq!(i8::from_key_text("-000").unwrap(), i8::MIN);
        assert_eq!(i8::from_key_text("-127").unwrap(), -1);
        assert!(bool::from_key_text("TRUE").is_err());
        assert!(char::from_key_text("ab").is_err());
    }
}
