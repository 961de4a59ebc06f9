//! Key conditions of a query: the partition, and a condition on the sort key built level by
//! level from the sort-key template (used by the generated query constructors).

use std::ops::Bound;

use crate::error::Error;
use crate::key::{MAX_PARTITION_KEY_BYTES, MAX_SORT_KEY_BYTES, check_key_value, escape_into};
use crate::table::IndexDef;

/// Sorts after every character a key can hold in practice: the upper end of open ranges.
const MAX_CHAR: char = '\u{10FFFF}';

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
/// whose component lies in it. Components compare as their encoded key text, which is the
/// natural order for fixed-width numbers, dates, UUIDs and separator-free strings.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct ComponentRange {
    /// Byte length of the sort-key prefix before the component.
    pub prefix_len: usize,
    /// The separator that ends the component, `None` when it ends the key.
    pub sep: Option<char>,
    pub lower: Bound<String>,
    pub upper: Bound<String>,
}

impl ComponentRange {
    /// True when the sort key `sk` has its component inside the range.
    pub(crate) fn contains(&self, sk: &str) -> bool {
        let Some(rest) = sk.get(self.prefix_len..) else {
            return false;
        };
        let component = match self.sep {
            Some(sep) => rest.find(sep).map_or(rest, |end| &rest[..end]),
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
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct KeyCond {
    pub index: Option<&'static IndexDef>,
    pub pk: String,
    pub sk: SkCond,
    pub range: Option<ComponentRange>,
    /// The range is empty (its lower bound is above its upper bound): nothing is sent.
    pub empty: bool,
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
#[doc(hidden)]
#[derive(Debug, Clone)]
pub struct KeyStart {
    index: Option<&'static IndexDef>,
    pk: String,
    prefix: String,
    missing_index: Option<&'static str>,
}

fn escaped(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    escape_into(text, &mut out);
    out
}

impl KeyStart {
    /// A query of partition `pk` on the table (`index == None`) or on an index, whose sort
    /// keys start with `base` (the literal before the first placeholder of the template).
    pub fn new(index: Option<&'static IndexDef>, pk: String, base: &str) -> Self {
        KeyStart { index, pk, prefix: base.to_owned(), missing_index: None }
    }

    /// A query of index `name`, which the table must declare (checked when it is sent).
    pub fn on_index(
        index: Option<&'static IndexDef>,
        name: &'static str,
        pk: String,
        base: &str,
    ) -> Self {
        let missing_index = index.is_none().then_some(name);
        KeyStart { index, pk, prefix: base.to_owned(), missing_index }
    }

    /// Fixes the next placeholder to `text` and appends `lit`, the literal that follows it
    /// (it starts with a separator, so the prefix matches whole components only).
    pub fn push(mut self, text: &str, lit: &str) -> Self {
        escape_into(text, &mut self.prefix);
        self.prefix.push_str(lit);
        self
    }

    /// Fixes the last placeholder: the sort key is then `prefix + text + lit`.
    pub(crate) fn eq(mut self, text: &str, lit: &str) -> KeyCond {
        escape_into(text, &mut self.prefix);
        self.prefix.push_str(lit);
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

    /// The next component starts with `text`.
    pub(crate) fn begins_with(mut self, text: &str) -> KeyCond {
        escape_into(text, &mut self.prefix);
        self.prefix()
    }

    /// Sort keys between `lo` and `hi` (inclusive), given whole (tree depth ranges, whose
    /// bounds are fixed-width numbers and need no component check).
    pub(crate) fn between(self, lo: String, hi: String) -> KeyCond {
        let empty = lo > hi;
        let mut cond = self.cond(SkCond::Between(lo, hi), None);
        cond.empty = empty;
        cond
    }

    /// The next component lies in the range; `sep` is the character that follows it in the
    /// template (`None` when it ends the key).
    pub(crate) fn range(
        self,
        lower: Bound<&str>,
        upper: Bound<&str>,
        sep: Option<char>,
    ) -> KeyCond {
        let p = &self.prefix;
        let lower = lower.map(escaped);
        let upper = upper.map(escaped);
        let lo = match &lower {
            Bound::Included(a) | Bound::Excluded(a) => Some(format!("{p}{a}")),
            Bound::Unbounded => (!p.is_empty()).then(|| p.clone()),
        };
        let hi = match &upper {
            Bound::Included(b) | Bound::Excluded(b) => Some(match sep {
                None => format!("{p}{b}"),
                Some(sep) => {
                    // Keys whose component is a prefix of `b` continue with `sep`; where `b`
                    // continues with a character below `sep`, such keys sort after `p + b`.
                    let cut = b.char_indices().find(|&(_, c)| c < sep).map_or(b.len(), |(i, _)| i);
                    format!("{p}{}{sep}{MAX_CHAR}", &b[..cut])
                }
            }),
            Bound::Unbounded => (!p.is_empty()).then(|| format!("{p}{MAX_CHAR}")),
        };
        let mut empty = false;
        let sk = match (lo, hi) {
            (Some(lo), Some(hi)) => {
                empty = lo > hi;
                SkCond::Between(lo, hi)
            }
            (Some(lo), None) => SkCond::Ge(lo),
            (None, Some(hi)) => SkCond::Le(hi),
            (None, None) => SkCond::Any,
        };
        let range = ComponentRange { prefix_len: p.len(), sep, lower, upper };
        let mut cond = self.cond(sk, Some(range));
        cond.empty |= empty;
        cond
    }

    fn cond(self, sk: SkCond, range: Option<ComponentRange>) -> KeyCond {
        KeyCond { index: self.index, pk: self.pk, sk, range, empty: false }
    }

    pub(crate) fn missing_index(&self) -> Option<&'static str> {
        self.missing_index
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn start(prefix: &str) -> KeyStart {
        KeyStart::new(None, "P".into(), prefix)
    }

    /// Every key of `keys` whose component (after "S#", ended by `#`) lies in the range,
    /// found through the server condition and the component check, equals the brute force.
    fn check_range(lower: Bound<&str>, upper: Bound<&str>, values: &[&str]) {
        let cond = start("S#").range(lower, upper, Some('#'));
        for v in values {
            let key = format!("S#{}#tail", escaped(v));
            let server = cond.admits(Some(&key));
            let component_ok = cond.range.as_ref().is_some_and(|r| r.contains(&key));
            let ev = escaped(v);
            let expected = (match lower {
                Bound::Included(a) => ev >= escaped(a),
                Bound::Excluded(a) => ev > escaped(a),
                Bound::Unbounded => true,
            }) && (match upper {
                Bound::Included(b) => ev <= escaped(b),
                Bound::Excluded(b) => ev < escaped(b),
                Bound::Unbounded => true,
            });
            assert_eq!(server && component_ok, expected, "{v:?} in {lower:?}..{upper:?}");
            if expected {
                assert!(server, "the server condition must not drop {v:?}");
            }
        }
    }

    #[test]
    fn ranges_are_exact_on_components() {
        let values =
            ["", "A", "NEW", "NEW YORK", "NEW!", "NEWARK", "NEW#X", "NY", "NYC", "a b", "z", "~"];
        let bounds = ["", "NEW", "NEW YORK", "NEWA", "NY", "Z", "a"];
        for a in bounds {
            for b in bounds {
                check_range(Bound::Included(a), Bound::Included(b), &values);
                check_range(Bound::Excluded(a), Bound::Excluded(b), &values);
                check_range(Bound::Included(a), Bound::Unbounded, &values);
                check_range(Bound::Unbounded, Bound::Excluded(b), &values);
            }
        }
    }

    #[test]
    fn prefixes_are_component_exact() {
        let cond = start("").push("NY", "#").prefix();
        assert_eq!(cond.sk, SkCond::BeginsWith("NY#".into()));
        assert!(!cond.admits(Some("NYC#X#1")));
        let cond = start("ORDER#").push("a#b", "#").eq("7", "");
        assert_eq!(cond.sk, SkCond::Eq("ORDER#a%23b#7".into()));
        assert_eq!(start("").prefix().sk, SkCond::Any);
    }

    #[test]
    fn empty_ranges_are_detected() {
        assert!(start("S#").range(Bound::Included("b"), Bound::Included("a"), Some('#')).empty);
        assert!(!start("S#").range(Bound::Included("a"), Bound::Included("a"), Some('#')).empty);
    }
}
