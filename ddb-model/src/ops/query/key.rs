//! Key conditions of a query: the partition, and a condition on the sort key built level by
//! level from the sort-key template (used by the generated query constructors).
//!
//! A condition on one component of the sort key (`state_ge`, `city_between`, ...) is sent as
//! a condition on the whole sort key that admits every key whose component is in the range
//! (a superset), and every returned item is then checked on its component
//! ([`ComponentRange::contains`]), so the result is exactly the range over the whole of
//! Unicode. No bound sent is the empty string (DynamoDB rejects `sk >= ""`): an empty lower
//! end means "no lower bound", and a range that can hold no key sends nothing.

use std::borrow::Cow;
use std::ops::Bound;

use crate::error::RequestProblem;
use crate::error::{Error, KeyProblem};
use crate::key::{
    KeyFormat, MAX_PARTITION_KEY_BYTES, MAX_SORT_KEY_BYTES, check_key_value, escape_into,
};
use crate::model::IndexDef;
use aws_sdk_dynamodb::types::AttributeValue;

use super::attrs::{AttrKey, AttrRange, AttrStart};

/// The smallest string greater than every string that starts with `prefix` (the last
/// character below U+10FFFF incremented, surrogates skipped, and what follows it dropped);
/// `None` when no string is (`prefix` empty or made of U+10FFFF only).
pub(crate) fn successor(prefix: &str) -> Option<String> {
    let mut chars: Vec<char> = prefix.chars().collect();
    while let Some(c) = chars.pop() {
        let next = match c {
            '\u{D7FF}' => Some('\u{E000}'),
            c => char::from_u32(u32::from(c) + 1),
        };
        if let Some(next) = next {
            chars.push(next);
            return Some(chars.into_iter().collect());
        }
    }
    None
}

/// The sort-key condition sent to DynamoDB.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum SkCond {
    /// The whole partition.
    Any,
    Eq(String),
    BeginsWith(String),
    Between(String, String),
    Ge(String),
    Le(String),
}

/// A range on one component of the sort key, checked on every returned item.
///
/// DynamoDB compares whole sort keys, and a key component is followed by a separator that
/// does not sort below every character a value may hold (a space sorts below `#`). The server
/// condition is therefore a superset of the range, and this check keeps exactly the items
/// whose key starts with the prefix and whose component lies in the range. Components compare
/// as their encoded key text, which is the natural order for fixed-width numbers, dates, UUIDs
/// and separator-free strings.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct ComponentRange {
    /// The sort-key text before the component.
    pub prefix: String,
    /// The separator that ends the component, `None` when it ends the key.
    pub sep: Option<char>,
    pub lower: Bound<String>,
    pub upper: Bound<String>,
}

impl ComponentRange {
    /// True when the sort key `sk` starts with the prefix and has its component inside the
    /// range.
    pub(crate) fn contains(&self, sk: &str) -> bool {
        let Some(rest) = sk.strip_prefix(self.prefix.as_str()) else {
            return false;
        };
        let component = match self.sep {
            Some(sep) => match rest.split_once(sep) {
                Some((component, _)) => component,
                None => return false, // not a key of the template
            },
            None => rest,
        };
        let above = match &self.lower {
            Bound::Included(lo) => component >= lo.as_str(),
            Bound::Excluded(lo) => component > lo.as_str(),
            Bound::Unbounded => true,
        };
        let below = match &self.upper {
            Bound::Included(hi) => component <= hi.as_str(),
            Bound::Excluded(hi) => component < hi.as_str(),
            Bound::Unbounded => true,
        };
        above && below
    }
}

/// The key condition of a query.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct KeyCond {
    pub index: Option<&'static IndexDef>,
    pub pk: String,
    pub sk: SkCond,
    pub range: Option<ComponentRange>,
    /// The range is empty (its lower bound is above its upper bound): nothing is sent.
    pub empty: bool,
    /// A verbatim value that would match other values' keys: the query is not sent.
    pub refused: Option<KeyError>,
    /// The condition on a multi-attribute index (then `pk` is empty and `sk` is `Any`).
    pub attrs: Option<AttrKey>,
}

impl KeyCond {
    /// Checks the key limits of the condition's values.
    pub(crate) fn validate(&self, entity: &'static str, pk_attr: &str) -> Result<(), Error> {
        check_key_value(entity, pk_attr, &self.pk, MAX_PARTITION_KEY_BYTES)?;
        let sk_attr = "sort key condition";
        let check = |v: &str| {
            if v.len() > MAX_SORT_KEY_BYTES {
                check_key_value(entity, sk_attr, v, MAX_SORT_KEY_BYTES)
            } else {
                Ok(())
            }
        };
        match &self.sk {
            SkCond::Any => Ok(()),
            SkCond::Eq(v) => check_key_value(entity, sk_attr, v, MAX_SORT_KEY_BYTES),
            SkCond::BeginsWith(v) | SkCond::Ge(v) | SkCond::Le(v) => check(v),
            SkCond::Between(lo, hi) => check(lo).and_then(|()| check(hi)),
        }
    }

    /// True when `sk` (the item's sort key on the queried index) satisfies the server
    /// condition. Used to reject cursors that point outside the query (a cursor's item may lie
    /// outside a component range, which the server condition widens, but never outside the
    /// server condition).
    pub(crate) fn admits(&self, sk: Option<&str>) -> bool {
        let Some(sk) = sk else {
            return matches!(self.sk, SkCond::Any);
        };
        match &self.sk {
            SkCond::Any => true,
            SkCond::Eq(v) => sk == v,
            SkCond::BeginsWith(p) => sk.starts_with(p.as_str()),
            SkCond::Between(lo, hi) => sk >= lo.as_str() && sk <= hi.as_str(),
            SkCond::Ge(lo) => sk >= lo.as_str(),
            SkCond::Le(hi) => sk <= hi.as_str(),
        }
    }
}

/// The start of a query: the partition and the sort-key prefix built so far. Generated
/// query constructors hold one and extend it level by level.
/// How one level of a sort-key template is written: the literal after its placeholder,
/// and whether the value is escaped (the default) or verbatim (`<path:verbatim>`).
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Level {
    /// The literal after the placeholder (empty for the last one).
    pub lit: &'static str,
    /// True for a verbatim placeholder.
    pub verbatim: bool,
    /// The placeholder's name, for errors (verbatim placeholders, and escaped ones ended by
    /// a literal that is not a separator).
    pub name: &'static str,
    /// The placeholder's format (`<due:iso8601(ms)>`), if it has one.
    pub format: Option<KeyFormat>,
}

/// An escaped placeholder followed by the literal.
impl From<&'static str> for Level {
    fn from(lit: &'static str) -> Level {
        Level::escaped(lit)
    }
}

impl Level {
    /// An escaped placeholder followed by `lit`.
    pub const fn escaped(lit: &'static str) -> Level {
        Level { lit, verbatim: false, name: "", format: None }
    }

    /// The escaped placeholder `name` followed by `lit`, which starts with a character the
    /// value's type never writes instead of a separator (`<seq>x`).
    pub const fn escaped_named(name: &'static str, lit: &'static str) -> Level {
        Level { lit, verbatim: false, name, format: None }
    }

    /// The verbatim placeholder `name` followed by `lit`.
    pub const fn verbatim(name: &'static str, lit: &'static str) -> Level {
        Level { lit, verbatim: true, name, format: None }
    }

    /// The placeholder `name` with `format` (`<due:iso8601(ms)>`), followed by `lit`.
    pub const fn formatted(name: &'static str, lit: &'static str, format: KeyFormat) -> Level {
        Level { lit, verbatim: format.is_verbatim(), name, format: Some(format) }
    }

    /// The text the placeholder writes for a value's key text `text` (before escaping).
    fn formatted_text<'t>(&self, text: &'t str) -> Cow<'t, str> {
        match &self.format {
            None => Cow::Borrowed(text),
            Some(format) => format.write(text),
        }
    }

    /// The separator that ends the value (the first character of the literal after it).
    pub fn sep(&self) -> Option<char> {
        self.lit.chars().next()
    }

    /// The value as it is written in the key: through its format, then escaped or as it is.
    fn encode<'t>(&self, text: &'t str) -> Cow<'t, str> {
        let text = self.formatted_text(text);
        if self.verbatim { text } else { escaped(&text).into() }
    }

    /// The problem of a value that holds the character ending it: a verbatim value, or an
    /// escaped one ended by another character than a separator (which its type declares it
    /// never writes: a value that writes it anyway would match other values' keys).
    fn ambiguous(&self, text: &str) -> Option<KeyProblem> {
        let separator = self.sep()?;
        let text = &*self.formatted_text(text);
        let holds = if self.verbatim {
            text.contains(separator)
        } else {
            !crate::escape::is_separator(separator) && escaped(text).contains(separator)
        };
        holds.then(|| KeyProblem::Ambiguous { placeholder: self.name.to_owned(), separator })
    }
}

/// Why a query cannot be sent, found while it was built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum KeyError {
    /// The query is malformed (an index the table lacks).
    Invalid(RequestProblem),
    /// A verbatim value would make the key condition match other values' keys.
    Refused { attribute: &'static str, problem: KeyProblem },
}

impl KeyError {
    pub(crate) fn to_error(&self, entity: &'static str) -> Error {
        match self {
            KeyError::Invalid(problem) => {
                Error::InvalidRequest { path: String::new(), problem: problem.clone() }
            }
            KeyError::Refused { attribute, problem } => Error::InvalidKey {
                entity,
                attribute: (*attribute).to_owned(),
                problem: problem.clone(),
            },
        }
    }
}

#[doc(hidden)]
#[derive(Debug, Clone)]
pub struct KeyStart {
    index: Option<&'static IndexDef>,
    pk: String,
    prefix: String,
    missing_index: Option<&'static str>,
    /// A verbatim value that would match other values' keys: (in the sort key?, problem).
    refused: Option<(bool, KeyProblem)>,
    /// The typed values of a query on a multi-attribute index.
    attrs: Option<AttrStart>,
}

fn escaped(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    escape_into(text, &mut out);
    out
}

impl KeyStart {
    pub fn new(index: Option<&'static IndexDef>, pk: String, base: &str) -> Self {
        KeyStart {
            index,
            pk,
            prefix: base.to_owned(),
            missing_index: None,
            refused: None,
            attrs: None,
        }
    }

    /// The partition of the multi-attribute index `name` (`index`, `None` when the table
    /// lacks it), named by one value per partition attribute in order (`None`: an absent
    /// value, which no item of the index has).
    pub fn attributes(
        index: Option<&'static IndexDef>,
        name: &'static str,
        values: Vec<Option<AttributeValue>>,
    ) -> Self {
        let attrs = AttrStart::new(index, name, values);
        KeyStart {
            index,
            pk: String::new(),
            prefix: String::new(),
            missing_index: index.is_none().then_some(name),
            refused: None,
            attrs: Some(attrs),
        }
    }

    /// The next sort attribute of a multi-attribute index equals `value`.
    pub(crate) fn push_attr(mut self, value: Option<AttributeValue>) -> Self {
        self.attrs = self.attrs.map(|a| a.push(value));
        self
    }

    /// The next sort attribute of a multi-attribute index lies in `range`.
    pub(crate) fn attr_range(mut self, range: AttrRange) -> KeyCond {
        let Some(attrs) = self.attrs.take() else {
            return self.invalid_attrs();
        };
        let (key, empty, problem) = attrs.range(range);
        let mut cond = self.cond(SkCond::Any, None);
        cond.attrs = Some(key);
        cond.empty = empty;
        cond.refused = cond.refused.or(problem);
        cond
    }

    /// A condition refused because the start was not one of a multi-attribute index.
    fn invalid_attrs(self) -> KeyCond {
        let index = self.index.map_or("<table>", |i| i.name);
        let mut cond = self.cond(SkCond::Any, None);
        cond.refused = Some(KeyError::Invalid(RequestProblem::NotMultiAttributeIndex { index }));
        cond
    }

    pub fn on_index(
        index: Option<&'static IndexDef>,
        name: &'static str,
        pk: String,
        base: &str,
    ) -> Self {
        let missing_index = index.is_none().then_some(name);
        KeyStart { index, pk, prefix: base.to_owned(), missing_index, refused: None, attrs: None }
    }

    /// The start refused for `ambiguous`, a verbatim part of the partition key.
    pub fn refuse_partition(mut self, problem: KeyProblem) -> Self {
        self.refused.get_or_insert((false, problem));
        self
    }

    /// Appends one level's value and the literal after it.
    fn write(&mut self, text: &str, level: Level) {
        if let Some(problem) = level.ambiguous(text) {
            self.refused.get_or_insert((true, problem));
        }
        let text = level.formatted_text(text);
        if level.verbatim {
            self.prefix.push_str(&text);
        } else {
            escape_into(&text, &mut self.prefix);
        }
    }

    pub fn push(mut self, text: &str, level: Level) -> Self {
        self.write(text, level);
        self.prefix.push_str(level.lit);
        self
    }

    pub(crate) fn eq(mut self, text: &str, level: Level) -> KeyCond {
        self.write(text, level);
        self.prefix.push_str(level.lit);
        let prefix = std::mem::take(&mut self.prefix);
        self.cond(SkCond::Eq(prefix), None)
    }

    /// Every sort key with the prefix built so far.
    pub(crate) fn prefix(mut self) -> KeyCond {
        let sk = if self.prefix.is_empty() {
            SkCond::Any
        } else {
            SkCond::BeginsWith(std::mem::take(&mut self.prefix))
        };
        self.cond(sk, None)
    }

    /// Every sort key of the partition, whatever the template.
    pub(crate) fn partition(self) -> KeyCond {
        self.cond(SkCond::Any, None)
    }

    /// The next component starts with `text` (in the case of the level's format, if it has
    /// one: a prefix is not a value the format could write whole).
    pub(crate) fn begins_with(mut self, text: &str, level: Level) -> KeyCond {
        let text = level.format.map_or(Cow::Borrowed(text), |f| f.case_of(text));
        let level = Level { format: None, ..level };
        self.write(&text, level);
        self.prefix()
    }

    /// Sort keys between `lo` and `hi` (inclusive), given whole (tree depth ranges, whose
    /// bounds are fixed-width numbers and need no component check).
    pub(crate) fn between(self, lo: String, hi: String) -> KeyCond {
        let empty = lo > hi;
        let sk = if lo.is_empty() { SkCond::Le(hi) } else { SkCond::Between(lo, hi) };
        let mut cond = self.cond(sk, None);
        cond.empty = empty;
        cond
    }

    /// The next component lies in the range; `sep` is the character that follows it in the
    /// template (`None` when it ends the key). Bounds are unescaped values and compare as
    /// their escaped key text; an empty lower bound includes every component.
    pub(crate) fn range(mut self, lower: Bound<&str>, upper: Bound<&str>, level: Level) -> KeyCond {
        for bound in [lower, upper] {
            if let Bound::Included(text) | Bound::Excluded(text) = bound
                && let Some(problem) = level.ambiguous(text)
            {
                self.refused.get_or_insert((true, problem));
            }
        }
        let sep = level.sep();
        let p = &self.prefix;
        let lower = lower.map(|t| level.encode(t).into_owned());
        let upper = upper.map(|t| level.encode(t).into_owned());
        // A key `p + c + rest` with `c >= a` is at least `p + a`.
        let lo = match &lower {
            Bound::Included(a) | Bound::Excluded(a) => format!("{p}{a}"),
            Bound::Unbounded => p.clone(),
        };
        // An inclusive upper end at or above every key whose component is at most `b`;
        // `None` when every key is.
        let mut empty = false;
        let hi = match &upper {
            Bound::Excluded(b) if b.is_empty() => {
                // No component is below "".
                empty = true;
                None
            }
            Bound::Included(b) | Bound::Excluded(b) => match sep {
                // The component ends the key: the keys are `p + c`, at most `p + b`.
                None => {
                    let hi = format!("{p}{b}");
                    // Only the empty key, which no item has.
                    empty |= hi.is_empty();
                    Some(hi)
                }
                // The keys are `p + c + sep + ..`. The greatest of them have as `c` the
                // longest prefix of `b` that `sep` sorts after at the next character (an
                // escaped `b` holds no separator): all of them are below the successor of
                // `p + that prefix + sep`.
                Some(sep) => {
                    let cut = b.char_indices().find(|&(_, c)| c < sep).map_or(b.len(), |(i, _)| i);
                    successor(&format!("{p}{}{sep}", &b[..cut]))
                }
            },
            // Every key that starts with `p`.
            Bound::Unbounded => successor(p),
        };
        let sk = match (lo.is_empty(), hi) {
            _ if empty => SkCond::Any,
            (false, Some(hi)) => {
                empty = lo > hi;
                SkCond::Between(lo, hi)
            }
            (false, None) => SkCond::Ge(lo),
            (true, Some(hi)) => SkCond::Le(hi),
            (true, None) => SkCond::Any,
        };
        let range = ComponentRange { prefix: p.clone(), sep, lower, upper };
        let mut cond = self.cond(sk, Some(range));
        cond.empty = empty;
        cond
    }

    fn cond(mut self, sk: SkCond, range: Option<ComponentRange>) -> KeyCond {
        // A multi-attribute start ends here with the attributes fixed so far.
        let (attrs, attr_problem) = match self.attrs.take() {
            Some(attrs) => {
                let (key, problem) = attrs.finish();
                (Some(key), problem)
            }
            None => (None, None),
        };
        let refused = self.refusal().or(attr_problem);
        KeyCond { index: self.index, pk: self.pk, sk, range, empty: false, refused, attrs }
    }

    pub(crate) fn missing_index(&self) -> Option<&'static str> {
        self.missing_index
    }

    /// The error for a verbatim value that would match other values' keys, if one was given.
    fn refusal(&self) -> Option<KeyError> {
        let (in_sk, problem) = self.refused.clone()?;
        let attribute = match (self.index, in_sk) {
            (Some(index), true) => index.sk.unwrap_or(index.pk),
            (Some(index), false) => index.pk,
            (None, true) => "sort key",
            (None, false) => "partition key",
        };
        Some(KeyError::Refused { attribute, problem })
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// The escaped level whose value ends at `sep`.
    fn level(sep: Option<char>) -> Level {
        let lit = match sep {
            None => "",
            Some(c) => ["#", "/", "|", "~", ":"]
                .into_iter()
                .find(|s| s.starts_with(c))
                .expect("the tests use separators"),
        };
        Level::escaped(lit)
    }

    fn start(prefix: &str) -> KeyStart {
        KeyStart::new(None, "P".into(), prefix)
    }

    fn in_range(v: &str, lower: &Bound<String>, upper: &Bound<String>) -> bool {
        (match lower {
            Bound::Included(a) => v >= a.as_str(),
            Bound::Excluded(a) => v > a.as_str(),
            Bound::Unbounded => true,
        }) && (match upper {
            Bound::Included(b) => v <= b.as_str(),
            Bound::Excluded(b) => v < b.as_str(),
            Bound::Unbounded => true,
        })
    }

    /// The values sent to the service: none of them is empty.
    fn sent(cond: &KeyCond) -> Vec<&str> {
        match &cond.sk {
            SkCond::Any => vec![],
            SkCond::Eq(v) | SkCond::BeginsWith(v) | SkCond::Ge(v) | SkCond::Le(v) => vec![v],
            SkCond::Between(lo, hi) => vec![lo, hi],
        }
    }

    /// The query `prefix` then a range on the next component (ended by `sep`), over keys
    /// `key_prefix + escaped value + sep + tail`: the server condition never drops a key of
    /// the range, and with the component check the result is exactly the range (keys of
    /// another prefix never in it). An empty condition holds no key; no bound is `""`.
    fn check(
        prefix: &str,
        lower: Bound<&str>,
        upper: Bound<&str>,
        sep: Option<char>,
        keys: &[(String, String, String)],
    ) -> Result<(), TestCaseError> {
        let cond = start(prefix).range(lower, upper, level(sep));
        prop_assert!(sent(&cond).iter().all(|v| !v.is_empty()), "{:?}", cond.sk);
        let (lo, hi) = (lower.map(escaped), upper.map(escaped));
        for (key_prefix, value, tail) in keys {
            let ev = escaped(value);
            let key = match sep {
                Some(sep) => format!("{key_prefix}{ev}{sep}{tail}"),
                None => format!("{key_prefix}{ev}"),
            };
            if key.is_empty() {
                continue; // no item has an empty key
            }
            // The key read as `prefix + component [+ sep + ..]` (another prefix and value may
            // write the same key); a component is escaped text, so it ends at the first `sep`.
            let component = key.strip_prefix(prefix).map(|rest| match sep {
                Some(sep) => rest.split_once(sep).map(|(c, _)| c),
                None => Some(rest),
            });
            let expected = match component {
                Some(Some(c)) if crate::key::unescape(c).is_ok() => in_range(c, &lo, &hi),
                Some(Some(_)) => continue, // not a key of this template
                _ => false,
            };
            let server = !cond.empty && cond.admits(Some(&key));
            let component = cond.range.as_ref().is_some_and(|r| r.contains(&key));
            prop_assert_eq!(
                server && component,
                expected,
                "key {:?} of {:?} in {:?}..{:?}, condition {:?}",
                key,
                value,
                lower,
                upper,
                cond.sk
            );
        }
        Ok(())
    }

    /// Text rich in what matters for order: separators, `%`, characters just below and above
    /// them, U+10FFFF and other multi-byte characters, and the empty string.
    fn text() -> impl Strategy<Value = String> {
        let chars = prop_oneof![
            6 => prop::sample::select(vec![
                '#', '/', '|', '~', ':', '%', ' ', '!', '$', '0', 'A', 'z', '\u{7F}',
                '\u{10FFFF}', '\u{FFFF}', '\u{E000}', '\u{D7FF}', 'é', '日',
            ]),
            1 => any::<char>(),
        ];
        prop::collection::vec(chars, 0..5).prop_map(|v| v.into_iter().collect())
    }

    fn bound() -> impl Strategy<Value = Bound<String>> {
        prop_oneof![
            text().prop_map(Bound::Included),
            text().prop_map(Bound::Excluded),
            Just(Bound::Unbounded),
        ]
    }

    fn as_ref(b: &Bound<String>) -> Bound<&str> {
        b.as_ref().map(String::as_str)
    }

    fn cases() -> u32 {
        // Pure and fast: `DDB_PROPTEST_CASES` only ever raises the count.
        std::env::var("DDB_PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(0).max(4096)
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: cases(), failure_persistence: None, ..ProptestConfig::default() })]

        /// Brute force over arbitrary prefixes, separators, bounds and keys (keys of the
        /// prefix and of other prefixes, among them the bound texts themselves).
        #[test]
        fn ranges_are_exact_over_full_unicode(
            prefix in prop_oneof![Just(String::new()), text()],
            sep in prop::option::of(prop::sample::select(crate::key::SEPARATORS.to_vec())),
            lower in bound(),
            upper in bound(),
            others in prop::collection::vec((text(), text(), text()), 0..24),
        ) {
            let mut keys: Vec<(String, String, String)> = Vec::new();
            for (i, (p, v, tail)) in others.into_iter().enumerate() {
                let p = if i % 4 == 3 { p } else { prefix.clone() };
                keys.push((p, v, tail));
            }
            for b in [&lower, &upper] {
                if let Bound::Included(v) | Bound::Excluded(v) = b {
                    for tail in ["", "\u{10FFFF}", "\u{10FFFF}x", " ", "~"] {
                        keys.push((prefix.clone(), v.clone(), tail.to_owned()));
                        keys.push((prefix.clone(), format!("{v}\u{10FFFF}"), tail.to_owned()));
                        keys.push((prefix.clone(), format!("{v} "), tail.to_owned()));
                    }
                }
            }
            check(&prefix, as_ref(&lower), as_ref(&upper), sep, &keys)?;
        }

        #[test]
        fn successor_bounds_every_extension(prefix in text(), tail in text()) {
            match successor(&prefix) {
                Some(next) => {
                    let extended = format!("{prefix}{tail}");
                    prop_assert!(extended < next, "{:?} {:?}", extended, next);
                }
                None => {
                    let all_max = prefix.chars().all(|c| c == char::MAX);
                    prop_assert!(all_max, "{:?}", prefix);
                }
            }
        }
    }

    #[test]
    fn a_next_component_starting_with_the_last_character_is_found() {
        // The keys the issue found missing: the next component starts with U+10FFFF.
        let keys: Vec<_> = ["", "\u{10FFFF}", "\u{10FFFF}\u{10FFFF}z"]
            .iter()
            .flat_map(|tail| {
                ["", "NY", "NY\u{10FFFF}"]
                    .map(|v| (String::new(), v.to_owned(), (*tail).to_owned()))
            })
            .collect();
        for (lower, upper) in [
            (Bound::Included("NY"), Bound::Unbounded),
            (Bound::Unbounded, Bound::Included("NY")),
            (Bound::Included(""), Bound::Included("NY")),
            (Bound::Unbounded, Bound::Included("NY\u{10FFFF}")),
        ] {
            check("", lower, upper, Some('#'), &keys).unwrap();
        }
        let keys: Vec<_> = keys.into_iter().map(|(_, v, t)| ("S#".to_owned(), v, t)).collect();
        check("S#", Bound::Included("NY"), Bound::Unbounded, Some('#'), &keys).unwrap();
        check("S#", Bound::Unbounded, Bound::Included("NY"), Some('#'), &keys).unwrap();
    }

    #[test]
    fn empty_bounds_send_no_empty_value() {
        // `>= ""` with nothing before the component: the whole partition, no condition.
        assert_eq!(
            start("").range(Bound::Included(""), Bound::Unbounded, level(Some('#'))).sk,
            SkCond::Any
        );
        assert_eq!(
            start("").range(Bound::Excluded(""), Bound::Unbounded, level(Some('#'))).sk,
            SkCond::Any
        );
        assert_eq!(
            start("").range(Bound::Included(""), Bound::Included("A"), level(Some('#'))).sk,
            SkCond::Le("A$".into())
        );
        // `< ""` and `<= ""` on a component that ends the key hold nothing: nothing is sent.
        assert!(start("").range(Bound::Unbounded, Bound::Excluded(""), level(Some('#'))).empty);
        assert!(start("").range(Bound::Unbounded, Bound::Included(""), level(None)).empty);
        assert!(!start("").range(Bound::Unbounded, Bound::Included(""), level(Some('#'))).empty);
        // A prefix before the component: the prefix is the lower end.
        assert_eq!(
            start("S#").range(Bound::Included(""), Bound::Unbounded, level(Some('#'))).sk,
            SkCond::Between("S#".into(), "S$".into())
        );
    }

    #[test]
    fn ranges_are_exact_on_components() {
        let values =
            ["", "A", "NEW", "NEW YORK", "NEW!", "NEWARK", "NEW#X", "NY", "NYC", "a b", "z", "~"];
        let keys: Vec<_> =
            values.iter().map(|v| ("S#".to_owned(), (*v).to_owned(), "tail".to_owned())).collect();
        let bounds = ["", "NEW", "NEW YORK", "NEWA", "NY", "Z", "a"];
        for a in bounds {
            for b in bounds {
                let s = Some('#');
                check("S#", Bound::Included(a), Bound::Included(b), s, &keys).unwrap();
                check("S#", Bound::Excluded(a), Bound::Excluded(b), s, &keys).unwrap();
                check("S#", Bound::Included(a), Bound::Unbounded, s, &keys).unwrap();
                check("S#", Bound::Unbounded, Bound::Excluded(b), s, &keys).unwrap();
            }
        }
    }

    #[test]
    fn prefixes_are_component_exact() {
        let cond = start("").push("NY", Level::escaped("#")).prefix();
        assert_eq!(cond.sk, SkCond::BeginsWith("NY#".into()));
        assert!(!cond.admits(Some("NYC#X#1")));
        let cond = start("ORDER#").push("a#b", Level::escaped("#")).eq("7", Level::escaped(""));
        assert_eq!(cond.sk, SkCond::Eq("ORDER#a%23b#7".into()));
        assert_eq!(start("").prefix().sk, SkCond::Any);
        assert_eq!(start("").begins_with("", Level::escaped("")).sk, SkCond::Any);
    }

    #[test]
    fn empty_ranges_are_detected() {
        assert!(
            start("S#").range(Bound::Included("b"), Bound::Included("a"), level(Some('#'))).empty
        );
        assert!(
            !start("S#").range(Bound::Included("a"), Bound::Included("a"), level(Some('#'))).empty
        );
    }
}
