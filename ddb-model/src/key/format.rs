//! Per-placeholder key formats: how a placeholder writes its value's key text
//! (`<n:unpadded>`, `<due:iso8601(ms)>`, `<name:lower>`), and reads it back.
//!
//! A format maps the value's own key text ([`KeyPart::key_text`](crate::KeyPart)) to the
//! text in the key, and back. Reading is exact: [`KeyFormat::read`] accepts only texts that
//! [`KeyFormat::write`] writes, so two texts never read as one value. The derive picks the
//! format from the template and checks its type through the traits of this module
//! ([`UnpaddedKey`], [`Iso8601Key`], [`CaseKey`]), at the placeholder.

use std::borrow::Cow;

/// The digits of the fraction of a second a datetime format writes (`iso8601(ms)`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Precision {
    /// Whole seconds, no fraction: `2026-01-05T10:00:00Z`.
    Seconds,
    /// Milliseconds, as JavaScript's `Date.toISOString` writes: `2026-01-05T10:00:00.000Z`.
    Millis,
    /// Microseconds: `2026-01-05T10:00:00.000000Z`.
    Micros,
    /// Nanoseconds, chrono's full precision: `2026-01-05T10:00:00.000000000Z`.
    Nanos,
}

impl Precision {
    /// The number of fraction digits written (0, 3, 6 or 9).
    pub const fn digits(self) -> usize {
        match self {
            Precision::Seconds => 0,
            Precision::Millis => 3,
            Precision::Micros => 6,
            Precision::Nanos => 9,
        }
    }

    /// The name in a template (`s`, `ms`, `us`, `ns`).
    pub const fn name(self) -> &'static str {
        match self {
            Precision::Seconds => "s",
            Precision::Millis => "ms",
            Precision::Micros => "us",
            Precision::Nanos => "ns",
        }
    }
}

/// The letter case a placeholder writes (`:lower`, `:upper`).
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Case {
    /// `:lower`.
    Lower,
    /// `:upper`.
    Upper,
}

/// An integer type's shape, for `:unpadded`: signed or not, and its width in bits.
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct IntKind {
    /// True for `i8` .. `i128`, `isize`.
    pub signed: bool,
    /// The width in bits (8 to 128).
    pub bits: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Kind {
    /// The value's own key text (in a case).
    Text,
    /// An integer in as few digits as it needs.
    Unpadded(IntKind),
    /// A `DateTime<Utc>` in ISO 8601.
    Iso8601(Precision),
}

/// The format of one placeholder: what the template writes for a value's key text. Made by
/// the generated code ([`unpadded`], [`iso8601`], [`text`] and the modifiers), written down
/// in the template as [`KeySeg::Formatted`](crate::key::KeySeg).
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct KeyFormat {
    kind: Kind,
    case: Option<Case>,
    verbatim: bool,
}

/// Integers that a placeholder may write `:unpadded`.
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be written `:unpadded`: the format is for integers",
    label = "this placeholder's field is not an integer",
    note = "`:unpadded` writes an integer in as few digits as it needs (`5`, `-12`); remove it for other types"
)]
pub trait UnpaddedKey {
    /// The integer's shape.
    const INT: IntKind;
}

macro_rules! unpadded_key {
    ($($t:ty => $signed:expr),*) => {$(
        impl UnpaddedKey for $t {
            const INT: IntKind = IntKind { signed: $signed, bits: <$t>::BITS };
        }
    )*};
}
unpadded_key!(u8 => false, u16 => false, u32 => false, u64 => false, u128 => false,
    usize => false, i8 => true, i16 => true, i32 => true, i64 => true, i128 => true,
    isize => true);

/// Datetimes that a placeholder may write `:iso8601(..)`.
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be written `:iso8601(..)`: the format is for `chrono::DateTime<Utc>`",
    label = "this placeholder's field is not a `DateTime<Utc>`",
    note = "`:iso8601(ms)` writes a UTC datetime as `2026-01-05T10:00:00.000Z` (feature `chrono`); remove it for other types"
)]
pub trait Iso8601Key {}

#[cfg(feature = "chrono")]
impl Iso8601Key for chrono::DateTime<chrono::Utc> {}

/// Text types that a placeholder may write `:lower` or `:upper`.
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be written `:lower` or `:upper`: the case formats are for `String` (and, after `:iso8601(..)`, datetimes)",
    label = "this placeholder's field is not a `String`",
    note = "for a type of your own, write its key text in the case you want in its `KeyPart` implementation"
)]
pub trait CaseKey {}

impl CaseKey for String {}

// Index key fields may be optional: the format applies to the value inside.
impl<T: UnpaddedKey> UnpaddedKey for Option<T> {
    const INT: IntKind = T::INT;
}
impl<T: Iso8601Key> Iso8601Key for Option<T> {}
impl<T: CaseKey> CaseKey for Option<T> {}

/// `:unpadded` for integer type `T`.
pub const fn unpadded<T: UnpaddedKey + ?Sized>() -> KeyFormat {
    KeyFormat { kind: Kind::Unpadded(T::INT), case: None, verbatim: false }
}

/// `:iso8601(precision)` for datetime type `T`: written without escapes (its `:` are the
/// format's), upper case unless [`lower`](KeyFormat::lower).
pub const fn iso8601<T: Iso8601Key + ?Sized>(precision: Precision) -> KeyFormat {
    KeyFormat { kind: Kind::Iso8601(precision), case: None, verbatim: true }
}

/// The key text of text type `T` as it is, to be given a case ([`lower`](KeyFormat::lower),
/// [`upper`](KeyFormat::upper)).
pub const fn text<T: CaseKey + ?Sized>() -> KeyFormat {
    KeyFormat { kind: Kind::Text, case: None, verbatim: false }
}

impl KeyFormat {
    /// The format, writing lower case.
    pub const fn lower(self) -> Self {
        KeyFormat { case: Some(Case::Lower), ..self }
    }

    /// The format, writing upper case.
    pub const fn upper(self) -> Self {
        KeyFormat { case: Some(Case::Upper), ..self }
    }

    /// The format, written without escapes (`:verbatim`).
    pub const fn verbatim(self) -> Self {
        KeyFormat { verbatim: true, ..self }
    }

    /// True when the text is written without escapes.
    pub const fn is_verbatim(&self) -> bool {
        self.verbatim
    }

    /// True when the texts sort as the values they write (by UTF-8 bytes, as the service
    /// sorts keys): ISO 8601 datetimes (years 0 to 9999) do; unpadded integers (`10` < `9`)
    /// and texts in one case (`B` < `a`, `b` > `a`) do not.
    pub const fn ordered(&self) -> bool {
        match self.kind {
            Kind::Text => self.case.is_none(),
            Kind::Unpadded(_) => false,
            Kind::Iso8601(_) => true,
        }
    }

    /// True when every value reads back as itself: false for a case of text (`Ann` reads
    /// back as `ann`) and a datetime below nanoseconds (truncated).
    pub const fn lossless(&self) -> bool {
        match self.kind {
            Kind::Text => self.case.is_none(),
            Kind::Unpadded(_) => true,
            Kind::Iso8601(p) => matches!(p, Precision::Nanos),
        }
    }

    /// The format as a template names it (`unpadded`, `iso8601(ms)`, `lower`), for errors.
    pub fn name(&self) -> String {
        let case = match self.case {
            Some(Case::Lower) => "lower",
            Some(Case::Upper) => "upper",
            None => "",
        };
        let kind = match self.kind {
            Kind::Text => String::new(),
            Kind::Unpadded(_) => "unpadded".to_owned(),
            Kind::Iso8601(p) => format!("iso8601({})", p.name()),
        };
        match (kind.is_empty(), case.is_empty()) {
            (true, _) => case.to_owned(),
            (false, true) => kind,
            (false, false) => format!("{kind}:{case}"),
        }
    }

    /// The text the placeholder writes (before escaping) for `text`, a value's key text.
    /// A text that is not one the value's type writes is written as it is (generated code
    /// never passes one).
    pub fn write<'t>(&self, text: &'t str) -> Cow<'t, str> {
        let written = match self.kind {
            Kind::Text => Cow::Borrowed(text),
            Kind::Unpadded(int) => {
                unpadded_write(int, text).map_or(Cow::Borrowed(text), Cow::Owned)
            }
            Kind::Iso8601(p) => iso_write(p, text).map_or(Cow::Borrowed(text), Cow::Owned),
        };
        self.apply_case(written)
    }

    /// `text` in the format's case (as it is without one): a prefix of the texts of a
    /// datetime level (`begins_with`).
    pub fn case_of<'t>(&self, text: &'t str) -> Cow<'t, str> {
        self.apply_case(Cow::Borrowed(text))
    }

    fn apply_case<'t>(&self, text: Cow<'t, str>) -> Cow<'t, str> {
        let ascii = !matches!(self.kind, Kind::Text);
        match self.case {
            None => text,
            Some(Case::Lower) if !text.chars().any(char::is_uppercase) && text.is_ascii() => text,
            Some(Case::Upper) if !text.chars().any(char::is_lowercase) && text.is_ascii() => text,
            Some(Case::Lower) if ascii => Cow::Owned(text.to_ascii_lowercase()),
            Some(Case::Upper) if ascii => Cow::Owned(text.to_ascii_uppercase()),
            Some(Case::Lower) => Cow::Owned(text.to_lowercase()),
            Some(Case::Upper) => Cow::Owned(text.to_uppercase()),
        }
    }

    /// The key text of the value that `text` (the placeholder's text, unescaped) was written
    /// for; `None` when the format never writes `text`.
    pub fn read<'t>(&self, text: &'t str) -> Option<Cow<'t, str>> {
        match self.kind {
            Kind::Text => {
                (self.apply_case(Cow::Borrowed(text)) == text).then_some(Cow::Borrowed(text))
            }
            Kind::Unpadded(int) => unpadded_read(int, text).map(Cow::Owned),
            Kind::Iso8601(p) => {
                let (t, z) = match self.case {
                    Some(Case::Lower) => ('t', 'z'),
                    _ => ('T', 'Z'),
                };
                iso_read(p, t, z, text).map(Cow::Owned)
            }
        }
    }
}

/// The largest value of `int`, and the magnitude of its smallest (0 unsigned).
const fn int_range(int: IntKind) -> (u128, u128) {
    if int.signed {
        let min = 1u128 << (int.bits - 1);
        (min - 1, min)
    } else {
        (u128::MAX >> (128 - int.bits), 0)
    }
}

/// Decimal digits of `n`.
fn width_of(n: u128) -> usize {
    n.checked_ilog10().map_or(1, |d| d as usize + 1)
}

/// All ASCII digits, at least one.
fn digits_only(text: &str) -> bool {
    !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit())
}

/// The unpadded text of an integer's key text: fixed-width digits, or for a negative value
/// `-` and its offset from the type's minimum (see `KeyPart for i32`).
fn unpadded_write(int: IntKind, text: &str) -> Option<String> {
    match text.strip_prefix('-') {
        None if digits_only(text) => {
            let trimmed = text.trim_start_matches('0');
            Some(if trimmed.is_empty() { "0".to_owned() } else { trimmed.to_owned() })
        }
        Some(offset) if int.signed && digits_only(offset) => {
            let (_, min) = int_range(int);
            let magnitude = min.checked_sub(offset.parse::<u128>().ok()?)?;
            Some(format!("-{magnitude}"))
        }
        _ => None,
    }
}

/// The key text of the integer whose unpadded text is `text`: digits without a leading zero
/// (`0` itself), `-` before a negative value's; `None` for any other text or a value out of
/// the type's range.
fn unpadded_read(int: IntKind, text: &str) -> Option<String> {
    let (negative, digits) = match text.strip_prefix('-') {
        Some(digits) => (true, digits),
        None => (false, text),
    };
    if !digits_only(digits) || (digits.len() > 1 && digits.starts_with('0')) {
        return None;
    }
    let value = digits.parse::<u128>().ok()?;
    let (max, min) = int_range(int);
    let width = width_of(max);
    if negative {
        // `-0` is not written; the offset from the minimum.
        if !int.signed || value == 0 || value > min {
            return None;
        }
        Some(format!("-{:0width$}", min - value))
    } else if value <= max {
        Some(format!("{value:0width$}"))
    } else {
        None
    }
}

/// Splits a `DateTime<Utc>` key text, `YYYYMMDDTHHMMSS.nnnnnnnnnZ` (a year outside 0 to 9999
/// with its sign), into its year, month+day, time and fraction.
fn iso_parts(text: &str) -> Option<(&str, &str, &str, &str)> {
    if !text.is_ascii() {
        return None;
    }
    let (date, rest) = text.split_once('T')?;
    let (year, month_day) = date.split_at_checked(date.len().checked_sub(4)?)?;
    let time = rest.get(..6)?;
    let fraction = rest.get(6..)?.strip_prefix('.')?.strip_suffix('Z')?;
    (!year.is_empty() && fraction.len() == 9).then_some((year, month_day, time, fraction))
}

/// The ISO 8601 text of a `DateTime<Utc>` key text, its fraction cut to `precision`.
fn iso_write(precision: Precision, text: &str) -> Option<String> {
    let (year, md, time, fraction) = iso_parts(text)?;
    let mut out = String::with_capacity(text.len() + 6);
    let (month, day) = md.split_at(2);
    let (h, m, s) = (&time[..2], &time[2..4], &time[4..6]);
    for part in [year, "-", month, "-", day, "T", h, ":", m, ":", s] {
        out.push_str(part);
    }
    let digits = precision.digits();
    if digits > 0 {
        out.push('.');
        out.push_str(&fraction[..digits]);
    }
    out.push('Z');
    Some(out)
}

/// The `DateTime<Utc>` key text of the ISO 8601 text `text` as [`iso_write`] writes it with
/// the letters `t` and `z` (`T`/`Z`, or lower case); `None` for any other layout. The year
/// and the ranges of the fields are checked by the type's own parser after.
fn iso_read(precision: Precision, t: char, z: char, text: &str) -> Option<String> {
    if !text.is_ascii() {
        return None;
    }
    let (date, time) = text.split_once(t)?;
    let (year, md) = date.split_at_checked(date.len().checked_sub(6)?)?;
    let md = md.as_bytes();
    let digit = |b: &u8| b.is_ascii_digit();
    let year_ok = match year.as_bytes() {
        [b'+' | b'-', rest @ ..] => rest.iter().all(digit),
        bytes => bytes.iter().all(digit),
    };
    if !year_ok || year.is_empty() || md[0] != b'-' || md[3] != b'-' {
        return None;
    }
    let time = time.strip_suffix(z)?;
    let (hms, fraction) = match precision.digits() {
        0 => (time, ""),
        n => {
            let (hms, fraction) = time.split_once('.')?;
            (fraction.len() == n).then_some((hms, fraction))?
        }
    };
    let hms = hms.as_bytes();
    if hms.len() != 8 || hms[2] != b':' || hms[5] != b':' {
        return None;
    }
    let fields = [&md[1..3], &md[4..6], &hms[..2], &hms[3..5], &hms[6..8], fraction.as_bytes()];
    if !fields.iter().all(|f| f.iter().all(digit)) {
        return None;
    }
    let [month, day, h, m, s, _] = fields.map(|f| std::str::from_utf8(f).unwrap_or_default());
    let mut out = String::with_capacity(26 + year.len());
    for part in [year, month, day, "T", h, m, s] {
        out.push_str(part);
    }
    out.push('.');
    out.push_str(fraction);
    out.extend(std::iter::repeat_n('0', 9 - fraction.len()));
    out.push('Z');
    Some(out)
}

#[cfg(test)]
mod tests;
