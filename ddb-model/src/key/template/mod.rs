//! Key templates: the one runtime that writes, prefixes, reads back and checks every key the
//! crate stores.
//!
//! A [`KeyTemplate`] is a sequence of [`KeySeg`]s: literal runs, written as they are, and
//! placeholders `Field(n)`, written as the text of part `n` with `%` and the separators escaped
//! (see [`escape_into`]). Every key goes through it:
//!
//! - entity keys and index keys: the derive writes an entity's templates down as data
//!   (`KeyTemplate::new("USER#<id>", &[lit("USER#"), part(0)])`), parts numbered in the order
//!   of `Entity::KeyFields`;
//! - graph edge keys: part 0 is the `from` endpoint, part 1 the `to` endpoint;
//! - tree keys: templates over the node type's sort-key prefix (`"<prefix><path>"`), built in
//!   `const` blocks by the tree helpers.
//!
//! What a template does: [`render`](KeyTemplate::render) a key (one allocation for parts that
//! need no escape), give the literal [`base`](KeyTemplate::base) where a query of its keys
//! starts, the [`prefix`](KeyTemplate::prefix) of the keys whose first placeholders are fixed
//! (a `begins_with` condition that matches whole components only), and read a key back into
//! its parts ([`reader`](KeyTemplate::reader), a run at a time with typed values, as the
//! generated `parse_key` does; [`parse`](KeyTemplate::parse), into texts). Key sizes are
//! checked against the service's limits by [`check_key_value`].

mod read;
#[cfg(test)]
mod tests;

use std::borrow::Cow;

pub use read::KeyReader;

use crate::error::{Error, KeyProblem};
use crate::escape::escape_into;
use crate::key::format::KeyFormat;

/// Largest partition key DynamoDB accepts, in UTF-8 bytes.
pub const MAX_PARTITION_KEY_BYTES: usize = 2048;
/// Largest sort key DynamoDB accepts, in UTF-8 bytes.
pub const MAX_SORT_KEY_BYTES: usize = 1024;

/// One run of a key template: literal text, or the placeholder of part `n` (an index into the
/// parts the caller passes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeySeg {
    /// Literal text, written as it is.
    Lit(&'static str),
    /// A placeholder: the text of part `n`, escaped.
    Field(usize),
    /// A verbatim placeholder (`<path:verbatim>`): the text of part `n` as it is, for layouts
    /// written without escapes. A text holding the first character of the literal after it
    /// would read back differently, so [`KeyTemplate::check`] refuses it.
    Verbatim(usize),
    /// A placeholder with a format (`<n:unpadded>`, `<due:iso8601(ms)>`, `<name:lower>`):
    /// the text of part `n` written by the format, then escaped unless the format is
    /// verbatim. Read back exactly: a text the format does not write is refused.
    Formatted(usize, KeyFormat),
}

impl KeySeg {
    /// The placeholder's part number, its format (`None`: the value's own text) and whether
    /// it is written without escapes; `None` for a literal.
    #[inline]
    pub const fn placeholder(&self) -> Option<(usize, Option<KeyFormat>, bool)> {
        match *self {
            KeySeg::Lit(_) => None,
            KeySeg::Field(n) => Some((n, None, false)),
            KeySeg::Verbatim(n) => Some((n, None, true)),
            KeySeg::Formatted(n, format) => Some((n, Some(format), format.is_verbatim())),
        }
    }
}

/// `KeySeg::Lit(text)`.
pub const fn lit(text: &'static str) -> KeySeg {
    KeySeg::Lit(text)
}

/// `KeySeg::Field(n)`.
pub const fn part(n: usize) -> KeySeg {
    KeySeg::Field(n)
}

/// `KeySeg::Verbatim(n)`.
pub const fn verbatim(n: usize) -> KeySeg {
    KeySeg::Verbatim(n)
}

/// `KeySeg::Formatted(n, format)`.
pub const fn formatted(n: usize, format: KeyFormat) -> KeySeg {
    KeySeg::Formatted(n, format)
}

/// A key template: literal runs and placeholders (`"USER#<id>"` is
/// `[lit("USER#"), part(0)]`).
///
/// A template whose keys are read back ([`reader`](Self::reader), [`parse`](Self::parse))
/// has a literal after each placeholder that is not last, starting with a separator
/// (`# / | ~ :`): an escaped part never holds one, so the part ends there. Or, after an
/// escaped placeholder whose type writes only some characters
/// ([`KeyPart::KEY_CHARS`](crate::KeyPart::KEY_CHARS)), with any other character but `%`:
/// the derive checks the type, and [`check`](Self::check) refuses a part that holds the
/// character anyway. Rendering and prefixes work on any template.
#[derive(Debug, Clone, Copy)]
pub struct KeyTemplate {
    text: &'static str,
    segs: &'static [KeySeg],
    /// One more than the largest part index (0 without placeholders).
    parts: usize,
    /// True when a placeholder is verbatim, or escaped and followed by a literal that is not a
    /// separator: parts then need [`check`](Self::check).
    guarded: bool,
}

impl KeyTemplate {
    /// The template `text` (as written, for error messages), made of `segs`.
    pub const fn new(text: &'static str, segs: &'static [KeySeg]) -> Self {
        let (mut parts, mut i, mut guarded) = (0, 0, false);
        while i < segs.len() {
            let Some((n, _, verbatim)) = segs[i].placeholder() else {
                i += 1;
                continue;
            };
            if n >= parts {
                parts = n + 1;
            }
            guarded |= verbatim;
            // An escaped placeholder ended by a literal that is not a separator: its values
            // are checked like verbatim ones.
            if !verbatim
                && i + 1 < segs.len()
                && let KeySeg::Lit(lit) = segs[i + 1]
                && !lit.is_empty()
                && !crate::escape::is_separator_byte(lit.as_bytes()[0])
            {
                guarded = true;
            }
            i += 1;
        }
        KeyTemplate { text, segs, parts, guarded }
    }

    /// Checks that these parts make a key that reads back to them: no part holds the
    /// character that ends it (the first of the literal after it; [`KeyProblem::Ambiguous`]
    /// otherwise). An escaped part never holds a separator; only templates with a verbatim
    /// placeholder, or an escaped one followed by another character, have anything to check.
    #[inline]
    pub fn check<P: PartText>(&self, parts: &[P]) -> Result<(), KeyProblem> {
        if !self.guarded {
            return Ok(());
        }
        let mut placeholders = 0;
        for (i, seg) in self.segs.iter().enumerate() {
            let Some((n, format, verbatim)) = seg.placeholder() else { continue };
            // Escaped values never hold a separator; a literal of another character after
            // the placeholder is sound only while the value does not hold it.
            if let Some(KeySeg::Lit(lit)) = self.segs.get(i + 1)
                && let Some(separator) = lit.chars().next()
                && (verbatim || !crate::escape::is_separator(separator))
                && parts.get(n).is_some_and(|p| match (verbatim, format) {
                    (true, None) => p.text().contains(separator),
                    (true, Some(format)) => format.write(p.text()).contains(separator),
                    (false, _) => escaped_holds(p, format, separator),
                })
            {
                let placeholder = read::placeholder_name(self.text, placeholders);
                return Err(KeyProblem::Ambiguous { placeholder, separator });
            }
            placeholders += 1;
        }
        Ok(())
    }

    /// The template as written.
    pub fn text(&self) -> &'static str {
        self.text
    }

    /// The runs of the template, in order.
    pub fn segs(&self) -> &'static [KeySeg] {
        self.segs
    }

    /// The key with these parts: literal runs as written, the text of part `n` for each
    /// `Field(n)`, escaped (a part that is not given is empty). One allocation, sized from
    /// the parts, unless a part needs escapes.
    #[inline(always)]
    pub fn render<P: PartText>(&self, parts: &[P]) -> String {
        render_segs(self.segs, parts)
    }

    /// Appends the key with these parts to `out` (see [`render`](Self::render)).
    #[inline]
    pub fn render_into<P: PartText>(&self, parts: &[P], out: &mut String) {
        out.reserve(segs_len(self.segs, parts));
        write_segs(self.segs, parts, out);
    }

    /// The start of every key whose first `n` placeholders (in template order) hold these
    /// parts: the template rendered up to its `n`-th placeholder, the literal before it
    /// included (the whole key when the template has no more than `n` placeholders). That
    /// literal starts with a character the part before it never holds, so a `begins_with` on
    /// the prefix matches whole components only. `prefix(parts, 0)` is the [`base`](Self::base).
    pub fn prefix<P: PartText>(&self, parts: &[P], n: usize) -> String {
        render_segs(self.segs.get(..self.field_pos(n)).unwrap_or(self.segs), parts)
    }

    /// The literal text before the first placeholder (all of it without placeholders):
    /// where a query of the template's keys starts.
    pub fn base(&self) -> Cow<'static, str> {
        let lead = self.field_pos(0);
        match self.segs.get(..lead).unwrap_or_default() {
            [] => Cow::Borrowed(""),
            [KeySeg::Lit(lit)] => Cow::Borrowed(lit),
            segs => Cow::Owned(render_segs::<&str>(segs, &[])),
        }
    }

    /// The position in `segs` of the `n`-th placeholder (0-based), or the number of segments
    /// when there are not that many.
    fn field_pos(&self, n: usize) -> usize {
        let mut seen = 0;
        for (i, seg) in self.segs.iter().enumerate() {
            if seg.placeholder().is_some() {
                if seen == n {
                    return i;
                }
                seen += 1;
            }
        }
        self.segs.len()
    }
}

/// The escaped text of `part` (written by `format`) holds `c`.
fn escaped_holds<P: PartText>(part: &P, format: Option<KeyFormat>, c: char) -> bool {
    if P::ESCAPED {
        return part.text().contains(c);
    }
    let text = match format {
        Some(format) => format.write(part.text()),
        None => Cow::Borrowed(part.text()),
    };
    let mut escaped = String::new();
    escape_into(&text, &mut escaped);
    escaped.contains(c)
}

/// The runs `segs` with these parts, in one allocation of exactly their size before escapes
/// (no room to spare, which the allocator would feel across many keys).
#[inline(always)]
fn render_segs<P: PartText>(segs: &[KeySeg], parts: &[P]) -> String {
    let mut key = String::with_capacity(segs_len(segs, parts));
    write_segs(segs, parts, &mut key);
    key
}

/// The room the runs `segs` take with these parts, before escapes.
#[inline(always)]
fn segs_len<P: PartText>(segs: &[KeySeg], parts: &[P]) -> usize {
    let mut len = 0;
    for seg in segs {
        len += match *seg {
            KeySeg::Lit(lit) => lit.len(),
            KeySeg::Field(n) | KeySeg::Verbatim(n) | KeySeg::Formatted(n, _) => {
                parts.get(n).map_or(0, |p| p.text().len())
            }
        };
    }
    len
}

/// Writes the runs `segs` with these parts.
#[inline(always)]
fn write_segs<P: PartText>(segs: &[KeySeg], parts: &[P], out: &mut String) {
    for seg in segs {
        match *seg {
            KeySeg::Lit(lit) => out.push_str(lit),
            KeySeg::Field(n) => {
                let text = parts.get(n).map_or("", P::text);
                if P::ESCAPED {
                    out.push_str(text);
                } else {
                    escape_into(text, out);
                }
            }
            KeySeg::Verbatim(n) => out.push_str(parts.get(n).map_or("", P::text)),
            KeySeg::Formatted(n, format) => write_formatted(parts.get(n), format, out),
        }
    }
}

/// Writes part `part` (empty when not given) through `format`: escaped unless the format is
/// verbatim. A part escaped already is written as it is (it was formatted when escaped).
fn write_formatted<P: PartText>(part: Option<&P>, format: KeyFormat, out: &mut String) {
    let Some(part) = part else { return };
    if P::ESCAPED {
        out.push_str(part.text());
        return;
    }
    let text = format.write(part.text());
    if format.is_verbatim() {
        out.push_str(&text);
    } else {
        escape_into(&text, out);
    }
}

/// The text of a key part: a field's key text, or an index key field's (`None` when the
/// field is an empty `Option`, and the item not in the index: never written).
pub trait PartText {
    /// True when the text is escaped already (an [`Escaped`] part): written as it is.
    const ESCAPED: bool = false;

    /// The text, before escaping (after, when [`ESCAPED`](Self::ESCAPED)).
    fn text(&self) -> &str;
}

macro_rules! deref_part_text {
    ($($t:ty),*) => {$(
        impl PartText for $t {
            #[inline]
            fn text(&self) -> &str {
                self
            }
        }
    )*};
}
deref_part_text!(str, String, Cow<'_, str>);

impl PartText for Option<Cow<'_, str>> {
    #[inline]
    fn text(&self) -> &str {
        self.as_deref().unwrap_or_default()
    }
}

impl<T: PartText + ?Sized> PartText for &T {
    const ESCAPED: bool = T::ESCAPED;

    #[inline]
    fn text(&self) -> &str {
        T::text(self)
    }
}

/// A part whose text is a key text escaped already (by [`escape_into`] or a template): it is
/// written as it is.
#[derive(Debug, Clone, Copy)]
pub struct Escaped<'a>(pub &'a str);

impl PartText for Escaped<'_> {
    const ESCAPED: bool = true;

    #[inline]
    fn text(&self) -> &str {
        self.0
    }
}

/// Checks one key attribute value against the DynamoDB limits: not empty, at most `max`
/// bytes ([`MAX_PARTITION_KEY_BYTES`], [`MAX_SORT_KEY_BYTES`]).
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
