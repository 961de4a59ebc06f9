//! Key conditions on a multi-attribute index: equality on every partition attribute, then on
//! a leading run of the sort attributes, then at most one range on the next sort attribute,
//! in the order the index declares them (the service's rule; the generated level types make
//! any other order fail to compile).
//!
//! Values are typed attribute values (numbers compare as numbers). What the service would
//! refuse is decided here, before sending: an empty string or binary, or a value longer than
//! a key may be, is `Error::InvalidKey`; a range that holds no value (`lt("")`, a `BETWEEN`
//! whose bounds are reversed) sends nothing and returns nothing; a range that holds every
//! value (`ge("")`, `begins_with("")`) is no condition.

use std::cmp::Ordering;

use aws_sdk_dynamodb::types::AttributeValue;

use super::key::KeyError;
use crate::error::KeyProblem;
use crate::error::RequestProblem;
use crate::expr::ExprBuilder;
use crate::item::Item;
use crate::key::{MAX_PARTITION_KEY_BYTES, MAX_SORT_KEY_BYTES};
use crate::model::{IndexDef, KeyAttr, compare_key_values, is_empty_key_value, key_value_len};

/// A range on one sort attribute.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum AttrRange {
    Lt(AttributeValue),
    Le(AttributeValue),
    Gt(AttributeValue),
    Ge(AttributeValue),
    Between(AttributeValue, AttributeValue),
    BeginsWith(AttributeValue),
}

/// The key condition of a query on a multi-attribute index.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct AttrKey {
    /// Every partition attribute and its value.
    pub pk: Vec<(&'static str, AttributeValue)>,
    /// The leading sort attributes fixed to a value.
    pub eq: Vec<(&'static str, AttributeValue)>,
    /// A range on the next sort attribute.
    pub range: Option<(&'static str, AttrRange)>,
}

/// The condition being built: the index, the values so far, and the first problem found.
#[derive(Debug, Clone)]
pub(crate) struct AttrStart {
    index: Option<&'static IndexDef>,
    key: AttrKey,
    problem: Option<KeyError>,
}

fn refuse(attribute: &'static str, problem: KeyProblem) -> KeyError {
    KeyError::Refused { attribute, problem }
}

/// The problem of a key value: missing (an `Option` argument), empty, or too long.
fn value_problem(attr: &'static str, v: Option<&AttributeValue>, max: usize) -> Option<KeyError> {
    let Some(v) = v else {
        return Some(refuse(attr, KeyProblem::Empty));
    };
    if is_empty_key_value(v) {
        return Some(refuse(attr, KeyProblem::Empty));
    }
    let len = key_value_len(v);
    (len > max).then(|| refuse(attr, KeyProblem::TooLong { len, max }))
}

impl AttrStart {
    /// The partition of `index` named by `values`, one per partition attribute in order.
    pub(crate) fn new(
        index: Option<&'static IndexDef>,
        name: &'static str,
        values: Vec<Option<AttributeValue>>,
    ) -> AttrStart {
        let mut start = AttrStart {
            index,
            key: AttrKey { pk: Vec::new(), eq: Vec::new(), range: None },
            problem: None,
        };
        let attrs = match index {
            Some(index) if index.is_multi() && index.pk_attrs.len() == values.len() => {
                index.pk_attrs
            }
            _ => {
                start.problem =
                    Some(KeyError::Invalid(RequestProblem::NotMultiAttributeIndex { index: name }));
                return start;
            }
        };
        for (attr, value) in attrs.iter().zip(values) {
            start.note(value_problem(attr.name, value.as_ref(), MAX_PARTITION_KEY_BYTES));
            if let Some(value) = value {
                start.key.pk.push((attr.name, value));
            }
        }
        start
    }

    fn note(&mut self, problem: Option<KeyError>) {
        if self.problem.is_none() {
            self.problem = problem;
        }
    }

    /// The next sort attribute, or a problem when the index has no more.
    fn next_attr(&mut self) -> Option<&'static KeyAttr> {
        let index = self.index?;
        let attr = index.sk_attrs.get(self.key.eq.len());
        if attr.is_none() {
            self.note(Some(KeyError::Invalid(RequestProblem::TooManySortAttributes {
                index: index.name,
                max: index.sk_attrs.len(),
            })));
        }
        attr
    }

    /// The next sort attribute equals `value`.
    pub(crate) fn push(mut self, value: Option<AttributeValue>) -> AttrStart {
        if let Some(attr) = self.next_attr() {
            self.note(value_problem(attr.name, value.as_ref(), MAX_SORT_KEY_BYTES));
            if let Some(value) = value {
                self.key.eq.push((attr.name, value));
            }
        }
        self
    }

    /// The next sort attribute lies in `range`. Returns the key, whether it can match nothing
    /// (nothing is sent), and the first problem found.
    pub(crate) fn range(mut self, range: AttrRange) -> (AttrKey, bool, Option<KeyError>) {
        let Some(attr) = self.next_attr() else {
            return (self.key, false, self.problem);
        };
        let too_long = |v: &AttributeValue| {
            let len = key_value_len(v);
            (len > MAX_SORT_KEY_BYTES)
                .then(|| refuse(attr.name, KeyProblem::TooLong { len, max: MAX_SORT_KEY_BYTES }))
        };
        let mut empty = false;
        let kept = match range {
            // Every stored value is above the empty one.
            AttrRange::Lt(v) | AttrRange::Le(v) if is_empty_key_value(&v) => {
                empty = true;
                None
            }
            AttrRange::Gt(v) | AttrRange::Ge(v) | AttrRange::BeginsWith(v)
                if is_empty_key_value(&v) =>
            {
                None
            }
            AttrRange::Between(lo, hi) => {
                if compare_key_values(&lo, &hi) == Some(Ordering::Greater)
                    || is_empty_key_value(&hi)
                {
                    empty = true;
                    None
                } else if is_empty_key_value(&lo) {
                    Some(AttrRange::Le(hi))
                } else {
                    Some(AttrRange::Between(lo, hi))
                }
            }
            other => Some(other),
        };
        if let Some(range) = &kept {
            let problem = match range {
                AttrRange::Lt(v)
                | AttrRange::Le(v)
                | AttrRange::Gt(v)
                | AttrRange::Ge(v)
                | AttrRange::BeginsWith(v) => too_long(v),
                AttrRange::Between(lo, hi) => too_long(lo).or_else(|| too_long(hi)),
            };
            self.note(problem);
        }
        self.key.range = kept.map(|r| (attr.name, r));
        (self.key, empty, self.problem)
    }

    /// The condition with the attributes fixed so far.
    pub(crate) fn finish(self) -> (AttrKey, Option<KeyError>) {
        (self.key, self.problem)
    }
}

impl AttrKey {
    /// The key condition expression.
    pub(crate) fn render(&self, b: &mut ExprBuilder) -> String {
        let mut parts = Vec::new();
        for (name, value) in self.pk.iter().chain(&self.eq) {
            let (n, v) = (b.name(name), b.value(value.clone()));
            parts.push(format!("{n} = {v}"));
        }
        if let Some((name, range)) = &self.range {
            let n = b.name(name);
            let mut v = |x: &AttributeValue| b.value(x.clone());
            parts.push(match range {
                AttrRange::Lt(x) => format!("{n} < {}", v(x)),
                AttrRange::Le(x) => format!("{n} <= {}", v(x)),
                AttrRange::Gt(x) => format!("{n} > {}", v(x)),
                AttrRange::Ge(x) => format!("{n} >= {}", v(x)),
                AttrRange::Between(lo, hi) => format!("{n} BETWEEN {} AND {}", v(lo), v(hi)),
                AttrRange::BeginsWith(x) => format!("begins_with({n}, {})", v(x)),
            });
        }
        parts.join(" AND ")
    }

    /// True when the key of an item (a cursor's) satisfies the condition.
    pub(crate) fn admits(&self, key: &Item) -> bool {
        let equal = |(name, value): &(&'static str, AttributeValue)| {
            key.get(*name).and_then(|v| compare_key_values(v, value)) == Some(Ordering::Equal)
        };
        if !self.pk.iter().chain(&self.eq).all(equal) {
            return false;
        }
        let Some((name, range)) = &self.range else {
            return true;
        };
        let Some(v) = key.get(*name) else {
            return false;
        };
        let cmp = |x: &AttributeValue| compare_key_values(v, x);
        match range {
            AttrRange::Lt(x) => cmp(x) == Some(Ordering::Less),
            AttrRange::Le(x) => matches!(cmp(x), Some(Ordering::Less | Ordering::Equal)),
            AttrRange::Gt(x) => cmp(x) == Some(Ordering::Greater),
            AttrRange::Ge(x) => matches!(cmp(x), Some(Ordering::Greater | Ordering::Equal)),
            AttrRange::Between(lo, hi) => {
                matches!(cmp(lo), Some(Ordering::Greater | Ordering::Equal))
                    && matches!(cmp(hi), Some(Ordering::Less | Ordering::Equal))
            }
            AttrRange::BeginsWith(p) => match (v, p) {
                (AttributeValue::S(v), AttributeValue::S(p)) => v.starts_with(p.as_str()),
                (AttributeValue::B(v), AttributeValue::B(p)) => v.as_ref().starts_with(p.as_ref()),
                _ => false,
            },
        }
    }

    /// Every attribute the condition names (for the keys a cursor holds).
    pub(crate) fn index_attrs(index: &IndexDef) -> impl Iterator<Item = &'static str> {
        index.pk_attrs.iter().chain(index.sk_attrs).map(|a| a.name)
    }
}
