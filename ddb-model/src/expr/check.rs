//! The checks DynamoDB makes on the values and expressions of a request that can be made
//! before sending: every value built from the caller's input passes through [`check_value`]
//! once (when it is converted), items through [`check_item`], and every expression string
//! through [`check_expression`].
//!
//! The limits are DynamoDB's (and AWS's DynamoDB Local's, probed with crafted requests):
//! numbers of at most 38 significant digits with a magnitude from 1E-130 to below 1E+126,
//! non-empty sets without duplicates, no empty map keys or attribute names, at most 32
//! levels of nesting (the top-level attribute is level 1), items of at most 400 KB,
//! expressions of at most 4 KB, and at most 2 MB of expression attribute values.

use std::cmp::Ordering;
use std::collections::HashSet;

use aws_sdk_dynamodb::primitives::Blob;
use aws_sdk_dynamodb::types::AttributeValue;

use crate::error::{Error, RequestProblem};
use crate::item::number_size;

/// Longest expression string (condition, update, filter, projection) DynamoDB accepts, in
/// bytes.
pub const MAX_EXPRESSION_BYTES: usize = 4096;
/// Most bytes of expression attribute values (and names) one request may carry.
pub const MAX_EXPRESSION_VALUES_BYTES: usize = 2 * 1024 * 1024;
/// Deepest nesting of lists and maps DynamoDB stores, counting the top-level attribute as
/// level 1.
pub const MAX_NESTING_LEVELS: usize = 32;
/// Most significant digits of a DynamoDB number.
pub const MAX_NUMBER_DIGITS: usize = 38;

/// The shape of a checked value: what its size and nesting add to a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Shape {
    /// The size as DynamoDB counts it against the item limit.
    pub size: usize,
    /// Levels of nesting: 1 for a scalar or an empty list or map, 2 for a list of scalars...
    pub levels: usize,
}

/// A problem found inside a value, with the steps from the value to where it is (innermost
/// first, collected while returning).
pub(crate) struct Found {
    pub problem: RequestProblem,
    steps: Vec<Step>,
}

enum Step {
    Key(String),
    Index(usize),
}

impl Found {
    fn new(problem: RequestProblem) -> Found {
        Found { problem, steps: Vec::new() }
    }

    fn at(mut self, step: Step) -> Found {
        self.steps.push(step);
        self
    }

    /// The error, at `base` (the attribute path of the value) plus the steps inside it.
    pub(crate) fn into_error(self, base: &str) -> Error {
        let (path, problem) = self.locate(base);
        Error::InvalidRequest { path, problem }
    }

    /// The path of the problem (`base` plus the steps inside the value), and the problem.
    pub(crate) fn locate(self, base: &str) -> (String, RequestProblem) {
        let mut path = base.to_owned();
        for step in self.steps.iter().rev() {
            match step {
                Step::Key(k) if path.is_empty() => path.push_str(k),
                Step::Key(k) => {
                    path.push('.');
                    path.push_str(k);
                }
                Step::Index(i) => path.push_str(&format!("[{i}]")),
            }
        }
        (path, self.problem)
    }
}

/// Checks one value in a single pass: numbers, sets, map keys and nesting (the value itself
/// may reach [`MAX_NESTING_LEVELS`]; where it is written, the caller adds the depth of the
/// path). Returns its shape, for the size checks that depend on how the value is used (an
/// update's values must fit in an item, a condition's need not).
pub(crate) fn check_value(value: &AttributeValue) -> Result<Shape, Found> {
    walk(value, 1)
}

/// The size of a set's elements. The set must not be empty, nor hold an element twice:
/// `key` is what makes two elements one (a number's canonical form), `show` names one.
fn set_size<'a, T, K: std::hash::Hash + Eq>(
    set: &'a [T],
    key: impl Fn(&'a T) -> Result<K, Found>,
    size: impl Fn(&T) -> usize,
    show: impl Fn(&T) -> String,
) -> Result<usize, Found> {
    non_empty(set.len())?;
    let mut seen = HashSet::with_capacity(set.len());
    let mut total = 0;
    for element in set {
        if !seen.insert(key(element)?) {
            return Err(Found::new(RequestProblem::DuplicateInSet { element: show(element) }));
        }
        total += size(element);
    }
    Ok(total)
}

/// `level` is the level of `value` itself within the value being checked (1 at the top).
fn walk(value: &AttributeValue, level: usize) -> Result<Shape, Found> {
    if level > MAX_NESTING_LEVELS {
        return Err(Found::new(RequestProblem::TooDeep { levels: level, max: MAX_NESTING_LEVELS }));
    }
    let scalar = |size| Ok(Shape { size, levels: 1 });
    match value {
        AttributeValue::S(s) => scalar(s.len()),
        AttributeValue::N(n) => {
            check_number(n)?;
            scalar(number_size(n))
        }
        AttributeValue::B(b) => scalar(b.as_ref().len()),
        AttributeValue::Bool(_) | AttributeValue::Null(_) => scalar(1),
        AttributeValue::Ss(set) => {
            scalar(set_size(set, |s| Ok(s.as_str()), String::len, |s| format!("{s:?}"))?)
        }
        AttributeValue::Ns(set) => {
            let canonical = |n: &String| Ok(check_number(n)?.canonical());
            scalar(set_size(set, canonical, |n| number_size(n), String::clone)?)
        }
        AttributeValue::Bs(set) => {
            let binary = |b: &Blob| format!("a binary of {} bytes", b.as_ref().len());
            scalar(set_size(set, |b| Ok(b.as_ref()), |b| b.as_ref().len(), binary)?)
        }
        AttributeValue::L(list) => {
            let mut shape = Shape { size: 3, levels: 1 };
            for (i, element) in list.iter().enumerate() {
                let inner = walk(element, level + 1).map_err(|f| f.at(Step::Index(i)))?;
                shape.size += 1 + inner.size;
                shape.levels = shape.levels.max(inner.levels + 1);
            }
            Ok(shape)
        }
        AttributeValue::M(map) => {
            let mut shape = Shape { size: 3, levels: 1 };
            for (key, element) in map {
                if key.is_empty() {
                    return Err(Found::new(RequestProblem::EmptyName).at(Step::Key(String::new())));
                }
                let inner = walk(element, level + 1).map_err(|f| f.at(Step::Key(key.clone())))?;
                shape.size += 1 + key.len() + inner.size;
                shape.levels = shape.levels.max(inner.levels + 1);
            }
            Ok(shape)
        }
        // A value type this version does not know: let the service judge it.
        other => scalar(format!("{other:?}").len()),
    }
}

fn non_empty(len: usize) -> Result<(), Found> {
    if len == 0 { Err(Found::new(RequestProblem::EmptySet)) } else { Ok(()) }
}

/// Checks a number as DynamoDB reads it: `sign? digits ('.' digits)? (e sign? digits)?` (at
/// least one digit before the exponent), at most 38 significant digits, a magnitude from
/// 1E-130 to below 1E+126 (zero is range-checked as if its last written digit were a 1, as
/// DynamoDB does). Allocates nothing unless it fails.
pub(crate) fn check_number(n: &str) -> Result<Number<'_>, Found> {
    let not_a_number = || Found::new(RequestProblem::NotANumber { number: n.to_owned() });
    let out_of_range = || Found::new(RequestProblem::NumberOutOfRange { number: n.to_owned() });
    let (negative, unsigned) = match n.as_bytes().first() {
        Some(b'-') => (true, &n[1..]),
        Some(b'+') => (false, &n[1..]),
        _ => (false, n),
    };
    let (coefficient, exponent) = match unsigned.find(['e', 'E']) {
        Some(at) => {
            let text = &unsigned[at + 1..];
            let digits = text.strip_prefix(['+', '-']).unwrap_or(text);
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return Err(not_a_number());
            }
            (&unsigned[..at], text.parse::<i64>().map_err(|_| not_a_number())?)
        }
        None => (unsigned, 0),
    };
    let (int_part, frac_part) = coefficient.split_once('.').unwrap_or((coefficient, ""));
    let digits_ok = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if int_part.len() + frac_part.len() == 0 || !digits_ok(int_part) || !digits_ok(frac_part) {
        return Err(not_a_number());
    }
    let digits = || int_part.bytes().chain(frac_part.bytes());
    let count = int_part.len() + frac_part.len();
    let int_len = i64::try_from(int_part.len()).unwrap_or(i64::MAX);
    // The power of ten of the digit at index `i` of the digits.
    let power_at = |i: usize| {
        (int_len - 1).saturating_sub(i64::try_from(i).unwrap_or(i64::MAX)).saturating_add(exponent)
    };
    let Some(first) = digits().position(|d| d != b'0') else {
        // Zero: range-checked at its last written digit.
        let power = power_at(count - 1);
        return if (-130..=125).contains(&power) {
            Ok(Number { negative: false, int_part: "", frac_part: "", first: 0, last: 0, power: 0 })
        } else {
            Err(out_of_range())
        };
    };
    let last = count - 1 - digits().rev().position(|d| d != b'0').unwrap_or(0);
    let significant = last - first + 1;
    if significant > MAX_NUMBER_DIGITS {
        return Err(Found::new(RequestProblem::TooManyDigits {
            number: n.to_owned(),
            digits: significant,
            max: MAX_NUMBER_DIGITS,
        }));
    }
    let power = power_at(first);
    if !(-130..=125).contains(&power) {
        return Err(out_of_range());
    }
    Ok(Number { negative, int_part, frac_part, first, last, power })
}

/// A number that passed [`check_number`]: its significant digits and the power of ten of
/// the first one (zero has none).
pub(crate) struct Number<'a> {
    negative: bool,
    int_part: &'a str,
    frac_part: &'a str,
    first: usize,
    last: usize,
    power: i64,
}

impl Number<'_> {
    /// The number as text that is equal for equal values (`1`, `1.0` and `10e-1`).
    fn canonical(&self) -> String {
        if self.is_zero() {
            return "0".to_owned();
        }
        let mut out = String::with_capacity(self.last - self.first + 8);
        if self.negative {
            out.push('-');
        }
        out.extend(self.digits().map(char::from));
        out.push('e');
        out.push_str(&self.power.to_string());
        out
    }

    fn is_zero(&self) -> bool {
        self.int_part.is_empty() && self.frac_part.is_empty()
    }

    /// The significant digits (none for zero).
    fn digits(&self) -> impl Iterator<Item = u8> + '_ {
        let digits = self.int_part.bytes().chain(self.frac_part.bytes());
        digits.skip(self.first).take(self.last - self.first + 1)
    }

    /// The order of two numbers by value (`-0` is `0`, `1.50` is `1.5`).
    pub(crate) fn value_cmp(&self, other: &Number<'_>) -> Ordering {
        let magnitude = |a: &Number<'_>, b: &Number<'_>| match (a.is_zero(), b.is_zero()) {
            (true, true) => Ordering::Equal,
            (true, false) => Ordering::Less,
            (false, true) => Ordering::Greater,
            (false, false) => a.power.cmp(&b.power).then_with(|| a.digits().cmp(b.digits())),
        };
        match (self.negative, other.negative) {
            (false, false) => magnitude(self, other),
            (true, true) => magnitude(other, self),
            (false, true) => Ordering::Greater,
            (true, false) => Ordering::Less,
        }
    }
}

/// Checks every attribute of an item to store (names, values, nesting) and returns its size
/// as DynamoDB counts it.
pub(crate) fn check_item(item: &crate::item::Item) -> Result<usize, Error> {
    let mut size = 0;
    for (name, value) in item {
        if name.is_empty() {
            return Err(Error::InvalidRequest {
                path: String::new(),
                problem: RequestProblem::EmptyName,
            });
        }
        // Nesting and numbers; the item's total is compared by the caller.
        let shape = walk(value, 1).map_err(|f| f.into_error(name))?;
        size += name.len() + shape.size;
    }
    Ok(size)
}

/// Checks the length of an expression string (`kind` names it in the error).
pub(crate) fn check_expression(kind: &'static str, expression: &str) -> Result<(), Error> {
    if expression.len() > MAX_EXPRESSION_BYTES {
        return Err(Error::InvalidRequest {
            path: String::new(),
            problem: RequestProblem::ExpressionTooLong {
                expression: kind,
                len: expression.len(),
                max: MAX_EXPRESSION_BYTES,
            },
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::item::MAX_ITEM_BYTES;

    fn number(n: &str) -> Result<String, RequestProblem> {
        check_number(n).map(|n| n.canonical()).map_err(|f| f.problem)
    }

    #[test]
    fn numbers_follow_dynamodb_rules() {
        for ok in
            ["0", "-0", "+5", ".5", "5.", "1e125", "9.9e125", "1e-130", "1E+2", "00042", "-1.5E-3"]
        {
            assert!(number(ok).is_ok(), "{ok}");
        }
        let d38 = "1".repeat(38);
        assert!(number(&d38).is_ok());
        assert!(number(&format!("1{}", "0".repeat(125))).is_ok(), "1E+125, one significant digit");
        assert!(number(&format!("1{}", "0".repeat(126))).is_err(), "1E+126");
        for nan in ["", "NaN", "inf", "-inf", "1e", "e5", ".", "+", "1.2.3", " 1", "1_0", "0x10"] {
            assert!(matches!(number(nan), Err(RequestProblem::NotANumber { .. })), "{nan:?}");
        }
        assert!(matches!(
            number(&"1".repeat(39)),
            Err(RequestProblem::TooManyDigits { digits: 39, .. })
        ));
        for out in ["1e126", "-1e126", "1e-131", "0e126", "0.0e-130", "1e99999999999999999"] {
            assert!(number(out).is_err(), "{out}");
        }
        assert_eq!(number("1").unwrap(), number("1.0").unwrap());
        assert_eq!(number("100").unwrap(), number("1e2").unwrap());
        assert_ne!(number("1").unwrap(), number("-1").unwrap());
        assert_eq!(number("-0.00120e3").unwrap(), "-12e0");
        assert_eq!(number("0.0").unwrap(), number("-0").unwrap());
    }

    #[test]
    fn values_are_checked_in_one_pass() {
        let mut v = AttributeValue::S("x".into());
        for _ in 0..31 {
            v = AttributeValue::L(vec![v]);
        }
        assert_eq!(check_value(&v).ok().map(|s| s.levels), Some(32));
        let deeper = AttributeValue::L(vec![v]);
        let err = check_value(&deeper).err().unwrap();
        assert_eq!(err.problem, RequestProblem::TooDeep { levels: 33, max: 32 });
        let set = AttributeValue::M(
            [("tags".to_owned(), AttributeValue::Ss(vec!["a".into(), "a".into()]))].into(),
        );
        let err = check_value(&set).err().unwrap().into_error("doc");
        assert!(err.to_string().contains("doc.tags"), "{err}");
        assert!(check_value(&AttributeValue::Ns(vec![])).is_err());
        assert!(check_value(&AttributeValue::Ns(vec!["1".into(), "1.0".into()])).is_err());
        let big = AttributeValue::S("x".repeat(MAX_ITEM_BYTES + 1));
        assert_eq!(check_value(&big).ok().map(|s| s.size), Some(MAX_ITEM_BYTES + 1));
    }
}
