//! Raw DynamoDB items and their size as DynamoDB counts it.

mod de;
pub(crate) mod json;
mod ser;
pub mod set;
#[cfg(test)]
mod tests;

/// `|v| Some(x)` when `v` is `AttributeValue::$variant(x)`, else `None` (moving `x` out).
macro_rules! take_variant {
    ($variant:ident) => {
        |v| match v {
            aws_sdk_dynamodb::types::AttributeValue::$variant(x) => Some(x),
            _ => None,
        }
    };
}
pub(crate) use take_variant;

use std::collections::HashMap;

use aws_sdk_dynamodb::types::AttributeValue;
use serde::Serialize;
use serde::de::DeserializeOwned;

/// A raw DynamoDB item: attribute names to values.
pub type Item = HashMap<String, AttributeValue>;

/// Largest item DynamoDB accepts, in bytes.
pub const MAX_ITEM_BYTES: usize = 400 * 1024;

/// Which members (struct fields and map entries) keep a `None` as `NULL`; the others leave
/// the member out (see `ser.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Nulls {
    /// Every member, at any depth (what serde_dynamo writes).
    pub all: bool,
    /// The top-level members of these names, and every member inside them.
    pub fields: &'static [&'static str],
    /// The top-level members that leave a `None` of their own out (`Option` fields; the
    /// others keep it as `NULL`); `None`: every one.
    pub absent: Option<&'static [&'static str]>,
}

impl Nulls {
    /// No member keeps a `None`.
    #[cfg(test)]
    pub(crate) const NONE: Nulls = Nulls { all: false, fields: &[], absent: None };
    /// Every member keeps a `None` as `NULL`.
    #[cfg(test)]
    pub(crate) const ALL: Nulls = Nulls { all: true, fields: &[], absent: None };
}

/// The item of a value's fields (what `serde_dynamo::to_item` returns, built in one pass,
/// with a member holding `None` left out unless `nulls` keeps it: see `ser.rs`).
pub(crate) fn to_fields<T: Serialize + ?Sized>(
    value: &T,
    nulls: Nulls,
) -> Result<Item, serde_dynamo::Error> {
    ser::to_item(value, nulls)
}

/// The attribute value of a value (what `serde_dynamo::to_attribute_value` returns, without
/// its panics, and with members holding `None` left out: see `ser.rs`); a `None` is `NULL`.
pub(crate) fn to_value<T: Serialize + ?Sized>(
    value: &T,
) -> Result<AttributeValue, serde_dynamo::Error> {
    Ok(ser::to_value(value, false)?.unwrap_or(AttributeValue::Null(true)))
}

/// [`to_value`], or `None` for a `None`; `nulls`: members keep a `None` as `NULL`, and so
/// does the value itself.
pub(crate) fn to_value_or_none<T: Serialize + ?Sized>(
    value: &T,
    nulls: bool,
) -> Result<Option<AttributeValue>, serde_dynamo::Error> {
    let value = ser::to_value(value, nulls)?;
    Ok(if nulls { Some(value.unwrap_or(AttributeValue::Null(true))) } else { value })
}

/// A value read from an item's fields (what `serde_dynamo::from_item` returns, read in one
/// pass: see `de.rs`).
pub(crate) fn from_fields<T: DeserializeOwned>(item: Item) -> Result<T, serde_dynamo::Error> {
    de::from_item(item)
}

/// A value read from one attribute value (a field's value in an update).
pub(crate) fn from_value<T: DeserializeOwned>(
    value: AttributeValue,
) -> Result<T, serde_dynamo::Error> {
    de::from_value(value)
}

/// The size of an item as DynamoDB counts it against the 400 KB limit: attribute names plus
/// values, where strings and binaries count their bytes, numbers about one byte per two
/// significant digits plus one, booleans and nulls one byte, and lists and maps three bytes
/// plus one byte per element.
pub fn item_size(item: &Item) -> usize {
    item.iter().map(|(name, value)| name.len() + value_size(value)).sum()
}

fn value_size(value: &AttributeValue) -> usize {
    match value {
        AttributeValue::S(s) => s.len(),
        AttributeValue::N(n) => number_size(n),
        AttributeValue::B(b) => b.as_ref().len(),
        AttributeValue::Bool(_) | AttributeValue::Null(_) => 1,
        AttributeValue::Ss(v) => v.iter().map(String::len).sum(),
        AttributeValue::Ns(v) => v.iter().map(|n| number_size(n)).sum(),
        AttributeValue::Bs(v) => v.iter().map(|b| b.as_ref().len()).sum(),
        AttributeValue::L(v) => 3 + v.iter().map(|e| 1 + value_size(e)).sum::<usize>(),
        AttributeValue::M(m) => {
            3 + m.iter().map(|(k, e)| 1 + k.len() + value_size(e)).sum::<usize>()
        }
        // A value type this version does not know: count its debug form, an over-estimate.
        other => format!("{other:?}").len(),
    }
}

pub(crate) fn number_size(n: &str) -> usize {
    let mantissa = n.trim_start_matches(['-', '+']).split(['e', 'E']).next().unwrap_or("");
    // Significant digits: from the first non-zero digit to the last one.
    let (mut position, mut first, mut last) = (0usize, None, 0usize);
    for b in mantissa.bytes().filter(u8::is_ascii_digit) {
        if b != b'0' {
            first.get_or_insert(position);
            last = position;
        }
        position += 1;
    }
    let significant = first.map_or(1, |first| last - first + 1);
    significant.div_ceil(2) + 1
}

#[cfg(test)]
mod size_tests {
    use super::*;

    #[test]
    fn sizes_follow_dynamodb_rules() {
        let mut item = Item::new();
        item.insert("name".into(), AttributeValue::S("abc".into()));
        assert_eq!(item_size(&item), 7);
        item.insert("n".into(), AttributeValue::N("12345".into()));
        assert_eq!(item_size(&item), 7 + 1 + 4);
        item.insert("l".into(), AttributeValue::L(vec![AttributeValue::Bool(true)]));
        assert_eq!(item_size(&item), 12 + 1 + 3 + 2);
    }

    #[test]
    fn numbers_count_their_significant_digits() {
        for (n, significant) in [
            ("0", 1),
            ("-0.000", 1),
            ("7", 1),
            ("100", 1),
            ("0012300", 3),
            ("-1.50", 2),
            ("12345678901234567890", 20),
            ("1.25E+10", 3),
            ("+0.0001e-5", 1),
        ] {
            assert_eq!(number_size(n), (significant as usize).div_ceil(2) + 1, "{n}");
        }
    }
}
