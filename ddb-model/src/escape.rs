//! Escaping of placeholder values inside key strings (public as `ddb_model::key::escape_into`
//! and friends).
//!
//! A leaf of the module graph: it imports nothing from the crate, so that the values errors
//! carry (a [`TreePath`](crate::TreePath) escapes its segments the same way) can use it from
//! below [`error`](crate::Error).
//!
//! A key is literal text and placeholder values. A value may contain anything, so the
//! characters that separate components (`SEPARATORS`) and the escape character itself are
//! written as `%XX` (upper-case hex). Escaping works character by character, so the escaped
//! form of a prefix is a prefix of the escaped form, and a value can never contain a raw
//! separator. That makes keys injective and prefix queries component-exact.

use std::borrow::Cow;

/// The escape character.
pub const ESCAPE: char = '%';

/// Characters that may separate key components. The derive requires the literal after a
/// placeholder to start with one of them, and values always escape them.
pub const SEPARATORS: [char; 5] = ['#', '/', '|', '~', ':'];

fn is_reserved(b: u8) -> bool {
    b == b'%' || is_separator_byte(b)
}

/// Returns true when byte `b` is a separator (which are ASCII).
pub(crate) const fn is_separator_byte(b: u8) -> bool {
    matches!(b, b'#' | b'/' | b'|' | b'~' | b':')
}

/// Returns true when `c` may separate key components.
pub const fn is_separator(c: char) -> bool {
    c.is_ascii() && is_separator_byte(c as u8)
}

const HEX: &[u8; 16] = b"0123456789ABCDEF";

/// Appends `text` to `out`, escaping reserved characters.
pub fn escape_into(text: &str, out: &mut String) {
    let bytes = text.as_bytes();
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        if is_reserved(b) {
            out.push_str(&text[start..i]);
            out.push('%');
            out.push(HEX[(b >> 4) as usize] as char);
            out.push(HEX[(b & 0xF) as usize] as char);
            start = i + 1;
        }
    }
    out.push_str(&text[start..]);
}

/// Why an escaped component could not be read back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnescapeError {
    /// Byte offset of the bad escape, or of the raw reserved character, within the component.
    pub offset: usize,
    /// The character found there: `%` for an escape that is not one of the six canonical
    /// ones, or a separator (`# / | ~ :`) that stands unescaped in the component.
    pub found: char,
}

impl std::fmt::Display for UnescapeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.found == ESCAPE {
            write!(
                f,
                "invalid escape at byte {}: `%` must be followed by 23, 25, 2F, 3A, 7C or 7E",
                self.offset
            )
        } else {
            write!(
                f,
                "unescaped `{}` at byte {}: a key component holds separators only as %XX escapes",
                self.found, self.offset
            )
        }
    }
}

fn hex_value(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// Reverses [`escape_into`]: the inverse of escaping on the texts escaping writes, and an
/// error on every other text. Only the canonical escapes of reserved characters are accepted,
/// and a raw reserved character (a separator, which escaping never leaves in a component) is
/// an error, so `unescape(t) == Ok(v)` implies that escaping `v` gives `t` byte for byte.
pub fn unescape(text: &str) -> Result<Cow<'_, str>, UnescapeError> {
    let bytes = text.as_bytes();
    let Some(first) = bytes.iter().position(|&b| is_reserved(b)) else {
        return Ok(Cow::Borrowed(text));
    };
    let mut out = String::with_capacity(text.len());
    let mut start = 0;
    let mut i = first;
    while let Some(&b) = bytes.get(i) {
        if !is_reserved(b) {
            i += 1;
            continue;
        }
        if b != b'%' {
            return Err(UnescapeError { offset: i, found: char::from(b) });
        }
        let decoded = match (bytes.get(i + 1), bytes.get(i + 2)) {
            (Some(&h), Some(&l)) => match (hex_value(h), hex_value(l)) {
                (Some(h), Some(l)) => Some((h << 4) | l),
                _ => None,
            },
            _ => None,
        };
        match decoded {
            Some(d) if is_reserved(d) => {
                out.push_str(&text[start..i]);
                out.push(char::from(d));
                i += 3;
                start = i;
            }
            _ => return Err(UnescapeError { offset: i, found: ESCAPE }),
        }
    }
    out.push_str(&text[start..]);
    Ok(Cow::Owned(out))
}

/// Helpers of the escaping tests here and in `key::template`.
#[cfg(test)]
pub(crate) mod test_support {
    /// `text` escaped.
    pub(crate) fn esc(text: &str) -> String {
        let mut out = String::new();
        super::escape_into(text, &mut out);
        out
    }

    /// Proptest cases: at least `min`. Pure and fast: `DDB_PROPTEST_CASES` only ever raises
    /// the count.
    pub(crate) fn cases(min: u32) -> u32 {
        std::env::var("DDB_PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(0).max(min)
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::test_support::{cases, esc};
    use super::*;

    #[test]
    fn escapes_every_reserved_character() {
        assert_eq!(esc("a#b/c|d~e:f%g"), "a%23b%2Fc%7Cd%7Ee%3Af%25g");
        assert_eq!(esc("plain-text_ok.@"), "plain-text_ok.@");
        assert_eq!(esc("日本#語"), "日本%23語");
    }

    #[test]
    fn unescape_rejects_non_canonical_forms() {
        assert!(unescape("%41").is_err(), "A is not reserved, so %41 is not canonical");
        assert!(unescape("%2f").is_err(), "lower-case hex is not canonical");
        assert!(unescape("abc%").is_err());
        assert!(unescape("abc%2").is_err());
        assert_eq!(unescape("a%23b").unwrap(), "a#b");
    }

    #[test]
    fn unescape_rejects_raw_separators() {
        for (text, offset, found) in
            [("a#b", 1, '#'), ("a/b", 1, '/'), ("a:b", 1, ':'), ("|", 0, '|'), ("%23~", 3, '~')]
        {
            let err = unescape(text).unwrap_err();
            assert_eq!((err.offset, err.found), (offset, found), "{text}");
            assert!(err.to_string().contains("unescaped"), "{err}");
        }
        assert_eq!(unescape("%25%3A").unwrap(), "%:");
    }

    /// Texts rich in what escaping cares about: every reserved character, hex digits in both
    /// cases, and characters of every UTF-8 length up to U+10FFFF.
    fn tricky() -> impl Strategy<Value = String> {
        let chars = prop_oneof![
            4 => prop::sample::select(vec![
                '#', '/', '|', '~', ':', '%', '2', '3', '5', '7', 'A', 'C', 'E', 'F', 'a', 'f', ' '
            ]),
            1 => any::<char>(),
            1 => prop::sample::select(vec!['\u{10FFFF}', '\u{FFFF}', '\u{E000}', '\u{D7FF}', 'é', '\0']),
        ];
        prop::collection::vec(chars, 0..12).prop_map(|v| v.into_iter().collect())
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: cases(2048), failure_persistence: None, ..ProptestConfig::default() })]

        /// `unescape` is the exact inverse of escaping: whatever it accepts escapes back to the
        /// same bytes, and every escaped text is accepted.
        #[test]
        fn unescape_accepts_exactly_the_escaped_texts(text in prop_oneof![tricky(), any::<String>()]) {
            if let Ok(value) = unescape(&text) {
                prop_assert_eq!(esc(&value), text.clone());
            }
            prop_assert_eq!(unescape(&esc(&text)).map(Cow::into_owned), Ok(text.clone()));
        }
    }

    #[test]
    fn separator_set_matches_reserved_bytes() {
        for c in SEPARATORS {
            assert!(is_separator(c));
            assert!(is_reserved(c as u8));
        }
        assert!(is_reserved(b'%'));
    }
}
