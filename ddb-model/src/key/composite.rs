//! Composite key parts: the text of a struct of several fields, or of an enum variant with
//! data, under `#[derive(KeyPart)]`.

use std::borrow::Cow;

use super::part::KeyPartError;

/// The character between the components of a composite key part (a struct with several
/// fields, or an enum variant with data, under `#[derive(KeyPart)]`): `alice.app`. It is
/// not a separator, so the key runtime leaves it as it is.
pub const COMPONENT_SEPARATOR: char = '.';

/// Appends one component of a composite key part: its text with `%` written `%25` and `.`
/// written `%2E`, so that components split back unambiguously.
#[doc(hidden)]
pub fn push_component(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '%' => out.push_str("%25"),
            '.' => out.push_str("%2E"),
            c => out.push(c),
        }
    }
}

/// The `N` components of a composite key text of `T` (see [`push_component`]), unescaped;
/// an error for another count or an escape `push_component` does not write.
#[doc(hidden)]
pub fn split_components<T, const N: usize>(text: &str) -> Result<[Cow<'_, str>; N], KeyPartError> {
    let count = || KeyPartError::new::<T>(text, format!("expected {N} components"));
    let mut out: [Cow<'_, str>; N] = std::array::from_fn(|_| Cow::Borrowed(""));
    let mut pieces = text.split(COMPONENT_SEPARATOR);
    for slot in &mut out {
        *slot = unescape_component::<T>(text, pieces.next().ok_or_else(count)?)?;
    }
    match pieces.next() {
        Some(_) => Err(count()),
        None => Ok(out),
    }
}

/// The variant name and the rest of a composite enum key text (`Org.acme` is `Org` and
/// `acme`); the rest is `None` for a variant without data.
#[doc(hidden)]
pub fn split_variant<T>(text: &str) -> Result<(Cow<'_, str>, Option<&str>), KeyPartError> {
    let (name, rest) = match text.split_once(COMPONENT_SEPARATOR) {
        Some((name, rest)) => (name, Some(rest)),
        None => (text, None),
    };
    Ok((unescape_component::<T>(text, name)?, rest))
}

fn unescape_component<'t, T>(text: &str, piece: &'t str) -> Result<Cow<'t, str>, KeyPartError> {
    if !piece.contains('%') {
        return Ok(Cow::Borrowed(piece));
    }
    let mut out = String::with_capacity(piece.len());
    let mut rest = piece;
    while let Some(at) = rest.find('%') {
        out.push_str(&rest[..at]);
        let escape = rest.get(at..at + 3);
        match escape {
            Some("%25") => out.push('%'),
            Some("%2E") => out.push('.'),
            _ => {
                return Err(KeyPartError::new::<T>(
                    text,
                    "a `%` in a component must be written `%25`, a `.` `%2E`",
                ));
            }
        }
        rest = &rest[at + 3..];
    }
    out.push_str(rest);
    Ok(Cow::Owned(out))
}
