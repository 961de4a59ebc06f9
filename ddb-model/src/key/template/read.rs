//! Reading a key back into its parts, following its template.

use std::borrow::Cow;

use super::{KeySeg, KeyTemplate};
use crate::error::{Error, KeyParseReason as Why};
use crate::escape::{is_separator, unescape};
use crate::key::KeyPartFns;
use crate::key::format::KeyFormat;

impl KeyTemplate {
    /// A reader of `key`, a stored value of attribute `attribute` of entity `entity` written
    /// with this template. The generated `parse_key` reads the template's runs with it in
    /// order (`lit`, `part`, `repeated`), then `end`.
    #[inline]
    pub fn reader<'k>(
        &self,
        entity: &'static str,
        attribute: &'static str,
        key: &'k str,
    ) -> KeyReader<'k> {
        KeyReader::new(entity, attribute, self.text, key)
    }

    /// The texts of the parts of `key` (unescaped, indexed by part number; empty for a part
    /// the template does not hold): the inverse of [`render`](Self::render) on the keys it
    /// writes, and [`Error::KeyParse`] on every other text. A placeholder that appears twice
    /// must hold the same text twice. A template that breaks the rules of keys read back (on
    /// [`KeyTemplate`]: two adjacent placeholders, `%` after an escaped one) is an error too.
    pub fn parse<'k>(
        &self,
        entity: &'static str,
        attribute: &'static str,
        key: &'k str,
    ) -> Result<Vec<Cow<'k, str>>, Error> {
        let mut reader = self.reader(entity, attribute, key);
        let mut texts: Vec<Option<Cow<'k, str>>> = vec![None; self.parts];
        let mut placeholders = 0;
        for (i, seg) in self.segs.iter().enumerate() {
            let (n, format, verbatim) = match *seg {
                KeySeg::Lit(lit) => {
                    reader.lit(lit)?;
                    continue;
                }
                _ => match seg.placeholder() {
                    Some(placeholder) => placeholder,
                    None => continue,
                },
            };
            let name = placeholder_name(self.text, placeholders);
            placeholders += 1;
            let until = match self.segs.get(i + 1) {
                None => None,
                // After an escaped placeholder, a literal that starts with a separator, or
                // with a character the value's type never writes (the derive checks the
                // type, rendering the values): the value ends at that character. Never the
                // escape character, which an escaped value holds.
                Some(KeySeg::Lit(lit)) => match lit.chars().next() {
                    Some(c) if verbatim || is_separator(c) || c != crate::escape::ESCAPE => Some(c),
                    _ => {
                        let (placeholder, literal) = (name, lit);
                        return Err(reader.error(Why::EscapedLiteral { placeholder, literal }));
                    }
                },
                Some(_) => {
                    return Err(reader.error(Why::AdjacentPlaceholders { placeholder: name }));
                }
            };
            let text = if verbatim {
                Cow::Borrowed(reader.verbatim_text(until))
            } else {
                reader.text(&name, until)?
            };
            let text = match format {
                None => text,
                Some(format) => match unformat(format, &text) {
                    Some(read) => read.map_or(text, Cow::Owned),
                    None => return Err(reader.format_error(&name, format, &text)),
                },
            };
            match texts.get_mut(n) {
                Some(Some(first)) if *first != text => {
                    let (first, again) = ((**first).into(), text.into());
                    return Err(reader.error(Why::Repeated { placeholder: name, first, again }));
                }
                Some(slot @ None) => *slot = Some(text),
                _ => {}
            }
        }
        reader.end()?;
        Ok(texts.into_iter().map(Option::unwrap_or_default).collect())
    }
}

/// `text` read back through `format`: `Some(None)` when it is the value's key text as it
/// is, `Some(Some(key text))` otherwise, `None` when the format never writes `text`.
fn unformat(format: KeyFormat, text: &str) -> Option<Option<String>> {
    match format.read(text)? {
        Cow::Owned(read) => Some(Some(read)),
        Cow::Borrowed(_) => Some(None),
    }
}

/// The name of the `k`-th placeholder of a template's text (`id` in `USER#<id>`), or its
/// number when the text does not name it.
pub(super) fn placeholder_name(text: &str, k: usize) -> String {
    let mut rest = text;
    for _ in 0..k {
        match rest.split_once('>') {
            Some((_, after)) => rest = after,
            None => return format!("#{k}"),
        }
    }
    rest.split_once('<')
        .and_then(|(_, after)| after.split_once('>'))
        .map_or_else(|| format!("#{k}"), |(name, _)| name.to_owned())
}

/// Reads a key string back into its placeholder values, following the template, a run at a
/// time. Used by the generated `parse_key` (through [`KeyTemplate::reader`]).
pub struct KeyReader<'a> {
    entity: &'static str,
    attribute: &'static str,
    template: &'static str,
    input: &'a str,
    pos: usize,
}

impl<'a> KeyReader<'a> {
    /// A reader of `input`, a value of `attribute` written with `template`.
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
    fn error(&self, reason: Why) -> Error {
        Error::KeyParse {
            entity: self.entity,
            attribute: self.attribute,
            template: self.template,
            input: self.input.to_owned(),
            reason: Box::new(reason),
        }
    }

    #[cold]
    fn format_error(&self, field: &str, format: KeyFormat, text: &str) -> Error {
        let (field, format, text) = (Some(field.into()), format.name(), text.into());
        self.error(Why::Format { field, format, text })
    }

    #[cold]
    fn unescape_error(&self, field: &str, problem: crate::escape::UnescapeError) -> Error {
        self.error(Why::Unescape { field: field.into(), problem })
    }

    /// Consumes a literal run of the template.
    #[inline]
    pub fn lit(&mut self, lit: &str) -> Result<(), Error> {
        if self.rest().starts_with(lit) {
            self.pos += lit.len();
            Ok(())
        } else {
            Err(self.error(Why::Expected { literal: lit.into(), at: self.pos }))
        }
    }

    /// The input not read yet. The position is always a character boundary of the input:
    /// it moves only past a literal the input starts with, or past a placeholder's text,
    /// which ends where `find` found a character or at the end (so slicing cannot fail).
    #[inline]
    fn rest(&self) -> &'a str {
        &self.input[self.pos..]
    }

    /// The escaped text of the placeholder at the reader's position, which ends at `until`
    /// (the first character of the next literal: a separator, or a character the part's type
    /// never writes) or at the end of the input.
    #[inline(always)]
    fn raw(&self, until: Option<char>) -> &'a str {
        let rest = self.rest();
        let len = match until {
            Some(c) => rest.find(c).unwrap_or(rest.len()),
            None => rest.len(),
        };
        &rest[..len]
    }

    /// Reads the unescaped text of one placeholder (see [`part`](Self::part)).
    pub fn text(&mut self, field: &str, until: Option<char>) -> Result<Cow<'a, str>, Error> {
        let raw = self.raw(until);
        let text = unescape(raw).map_err(|e| self.unescape_error(field, e))?;
        self.pos += raw.len();
        Ok(text)
    }

    /// Reads the text of one verbatim placeholder (written without escapes): up to `until`
    /// or the end of the input.
    pub fn verbatim_text(&mut self, until: Option<char>) -> &'a str {
        let raw = self.raw(until);
        self.pos += raw.len();
        raw
    }

    /// Reads one verbatim placeholder value as a `T` (see [`part`](Self::part)): its text is
    /// the key's, as it is.
    pub fn verbatim_part<T>(
        &mut self,
        field: &str,
        until: Option<char>,
        fns: KeyPartFns<T>,
    ) -> Result<T, Error> {
        self.value::<T, true>(field, until, fns, None)
    }

    /// Reads a second occurrence of a verbatim placeholder and checks it equals the first.
    pub fn verbatim_repeated<T>(
        &mut self,
        field: &str,
        until: Option<char>,
        fns: KeyPartFns<T>,
        first: &T,
    ) -> Result<(), Error> {
        self.again::<T, true>(field, until, fns, None, first)
    }

    /// Reads one placeholder value with a format (`<n:unpadded>`) as a `T` (see
    /// [`part`](Self::part)): its text, unescaped unless the format is verbatim, must be one
    /// the format writes.
    pub fn formatted_part<T>(
        &mut self,
        field: &str,
        until: Option<char>,
        fns: KeyPartFns<T>,
        format: KeyFormat,
    ) -> Result<T, Error> {
        self.value::<T, false>(field, until, fns, Some(format))
    }

    /// Reads a second occurrence of a placeholder with a format and checks it equals the
    /// first.
    pub fn formatted_repeated<T>(
        &mut self,
        field: &str,
        until: Option<char>,
        fns: KeyPartFns<T>,
        format: KeyFormat,
        first: &T,
    ) -> Result<(), Error> {
        self.again::<T, false>(field, until, fns, Some(format), first)
    }

    /// Reads one placeholder value as a `T`, which must write the same text back. The value
    /// ends at `until` (the first character of the next literal: a separator, or a character
    /// the type never writes) or at the end of the input.
    pub fn part<T>(
        &mut self,
        field: &str,
        until: Option<char>,
        fns: KeyPartFns<T>,
    ) -> Result<T, Error> {
        self.value::<T, false>(field, until, fns, None)
    }

    /// Reads a second occurrence of a placeholder and checks it equals the first.
    pub fn repeated<T>(
        &mut self,
        field: &str,
        until: Option<char>,
        fns: KeyPartFns<T>,
        first: &T,
    ) -> Result<(), Error> {
        self.again::<T, false>(field, until, fns, None, first)
    }

    /// One placeholder value: its text unescaped (as it is when `VERBATIM` or a verbatim
    /// format), read back through its format if it has one, read as a `T` that must write
    /// the same text back. Inlined: the generated `parse_key` calls it for every field, and
    /// a call through `text` costs each a few percent.
    #[inline(always)]
    fn value<T, const VERBATIM: bool>(
        &mut self,
        field: &str,
        until: Option<char>,
        fns: KeyPartFns<T>,
        format: Option<KeyFormat>,
    ) -> Result<T, Error> {
        let raw = self.raw(until);
        let text = if VERBATIM || format.is_some_and(|f| f.is_verbatim()) {
            Cow::Borrowed(raw)
        } else {
            unescape(raw).map_err(|e| self.unescape_error(field, e))?
        };
        let text = match format {
            None => text,
            Some(format) => match unformat(format, &text) {
                Some(read) => read.map_or(text, Cow::Owned),
                None => return Err(self.format_error(field, format, &text)),
            },
        };
        let field_name = || Some(field.into());
        let value = (fns.from_key_text)(&text)
            .map_err(|e| self.error(Why::Part { field: field_name(), problem: e }))?;
        // A type whose parser accepts only the texts it writes needs no re-encoding to prove
        // the text canonical; any other type's value is written again and compared.
        if !fns.canonical && (fns.key_text)(&value) != text {
            let (text, type_name) = (text.into(), std::any::type_name::<T>());
            return Err(self.error(Why::NotCanonical { field: field_name(), text, type_name }));
        }
        self.pos += raw.len();
        Ok(value)
    }

    /// A second occurrence of a placeholder, checked equal to the first.
    fn again<T, const VERBATIM: bool>(
        &mut self,
        field: &str,
        until: Option<char>,
        fns: KeyPartFns<T>,
        format: Option<KeyFormat>,
        first: &T,
    ) -> Result<(), Error> {
        let again: T = self.value::<T, VERBATIM>(field, until, fns, format)?;
        let (first, again) = ((fns.key_text)(first), (fns.key_text)(&again));
        if first == again {
            Ok(())
        } else {
            let (first, again) = (first.into(), again.into());
            Err(self.error(Why::Repeated { placeholder: field.into(), first, again }))
        }
    }

    /// The error for a sort key that is missing.
    pub fn missing(entity: &'static str, attribute: &'static str, template: &'static str) -> Error {
        Error::KeyParse {
            entity,
            attribute,
            template,
            input: String::new(),
            reason: Box::new(Why::MissingSortKey),
        }
    }

    /// Checks that the whole input was consumed.
    #[inline]
    pub fn end(self) -> Result<(), Error> {
        if self.pos == self.input.len() {
            Ok(())
        } else {
            Err(self.error(Why::Trailing { at: self.pos }))
        }
    }
}
