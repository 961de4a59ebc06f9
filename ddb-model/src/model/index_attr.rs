//! The values of multi-attribute index keys: [`IndexAttribute`], implemented by the field
//! types that can be a key attribute of their own (strings, integers, UUIDs, dates, and an
//! `Option` of them for an item that is left out of the index), and the arguments the
//! generated queries take for them ([`AttrArg`], [`AttrPrefix`]).
//!
//! A key attribute is stored exactly as the entity's codec writes the field (through serde),
//! so what a query compares with is what the item holds.

use std::cmp::Ordering;

use aws_sdk_dynamodb::types::AttributeValue;

use super::table::{AttrKind, IndexDef, KeyAttr, Table};
use crate::error::{Error, KeyProblem};
use crate::expr::check_number;
use crate::key::{MAX_PARTITION_KEY_BYTES, MAX_SORT_KEY_BYTES};

/// A field type that can be an attribute of a multi-attribute index key
/// (`#[index(by_status, pk = [tenant, status], sk = [priority])]`).
///
/// Implemented for `String` and `char` (`S`), the integer types up to 64 bits and `usize` /
/// `isize` (`N`: compared as numbers, 9 < 10), `uuid::Uuid` and `chrono::NaiveDate` behind
/// their features (`S`, their hyphenated and `YYYY-MM-DD` texts, which sort as the values
/// do), and `Option<T>` of those: an item whose field is `None` has no such attribute and is
/// not in the index (a sparse index). Implement it for a type of your own whose serde form
/// is one string, number or binary value; `value` must return exactly what serde writes.
///
/// `chrono::DateTime<Utc>` is left out on purpose: its serde text drops trailing zeros of the
/// fraction, so `12:00:00Z` sorts after `12:00:00.5Z`; store an epoch number (`i64`) or a
/// `NaiveDate` instead.
///
/// ```
/// use ddb_model::entity::{AttrKind, IndexAttribute};
///
/// assert_eq!(<u32 as IndexAttribute>::KIND, AttrKind::N);
/// assert_eq!(<Option<String> as IndexAttribute>::KIND, AttrKind::S);
/// assert!(None::<String>.value().is_none());
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be an attribute of a multi-attribute index key",
    label = "not a string, number or binary value",
    note = "a multi-attribute index key is made of strings (String, char, uuid::Uuid, chrono::NaiveDate), integers (stored as numbers) or an Option of those (None: the item is not in the index)",
    note = "a type of your own can implement `ddb_model::entity::IndexAttribute` if serde writes it as one string, number or binary value"
)]
pub trait IndexAttribute {
    /// The DynamoDB type of the attribute.
    const KIND: AttrKind;
    /// The type of the values a query compares the attribute with: the type itself, or the
    /// type inside an `Option`.
    type Value: IndexAttribute;
    /// The stored value; `None` when the item has no such attribute (an `Option` field set
    /// to `None`).
    fn value(&self) -> Option<AttributeValue>;
}

macro_rules! numbers {
    ($($t:ty),*) => {$(
        impl IndexAttribute for $t {
            const KIND: AttrKind = AttrKind::N;
            type Value = $t;
            fn value(&self) -> Option<AttributeValue> {
                Some(AttributeValue::N(self.to_string()))
            }
        }
    )*};
}

numbers!(u8, u16, u32, u64, usize, i8, i16, i32, i64, isize);

impl IndexAttribute for String {
    const KIND: AttrKind = AttrKind::S;
    type Value = String;
    fn value(&self) -> Option<AttributeValue> {
        Some(AttributeValue::S(self.clone()))
    }
}

impl IndexAttribute for char {
    const KIND: AttrKind = AttrKind::S;
    type Value = char;
    fn value(&self) -> Option<AttributeValue> {
        Some(AttributeValue::S(self.to_string()))
    }
}

#[cfg(feature = "uuid")]
impl IndexAttribute for uuid::Uuid {
    const KIND: AttrKind = AttrKind::S;
    type Value = uuid::Uuid;
    fn value(&self) -> Option<AttributeValue> {
        Some(AttributeValue::S(self.hyphenated().to_string()))
    }
}

#[cfg(feature = "chrono")]
impl IndexAttribute for chrono::NaiveDate {
    const KIND: AttrKind = AttrKind::S;
    type Value = chrono::NaiveDate;
    fn value(&self) -> Option<AttributeValue> {
        Some(AttributeValue::S(self.to_string()))
    }
}

impl<T: IndexAttribute<Value = T>> IndexAttribute for Option<T> {
    const KIND: AttrKind = T::KIND;
    type Value = T;
    fn value(&self) -> Option<AttributeValue> {
        self.as_ref().and_then(T::value)
    }
}

/// A value a generated query compares an index attribute with, for a field of type `F`: a
/// value of the field's type or of the type inside its `Option`, a reference to one, and a
/// `&str` for a `String` attribute.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a value of the index attribute's field type `{F}`",
    label = "expected a value of the field's type `{F}` (or of the type inside its `Option`, or a reference)"
)]
pub trait AttrArg<F> {
    /// The value as it is stored.
    fn attr_value(&self) -> Option<AttributeValue>;
}

/// The arguments for a field of type `$f`, whose values are `T`s.
macro_rules! attr_args {
    ($($f:ty),*) => {$(
        impl<T: IndexAttribute<Value = T>> AttrArg<$f> for T {
            fn attr_value(&self) -> Option<AttributeValue> {
                self.value()
            }
        }

        impl<T: IndexAttribute<Value = T>> AttrArg<$f> for &T {
            fn attr_value(&self) -> Option<AttributeValue> {
                (**self).value()
            }
        }
    )*};
}
attr_args!(T, Option<T>);

impl AttrArg<String> for &str {
    fn attr_value(&self) -> Option<AttributeValue> {
        Some(AttributeValue::S((*self).to_owned()))
    }
}

impl AttrArg<Option<String>> for &str {
    fn attr_value(&self) -> Option<AttributeValue> {
        Some(AttributeValue::S((*self).to_owned()))
    }
}

/// A prefix for `begins_with` on an index attribute of a field of type `F`: text, for the
/// attributes stored as strings. Numbers have no prefixes (DynamoDB refuses `begins_with` on
/// them).
#[diagnostic::on_unimplemented(
    message = "`begins_with` compares strings: the index attribute's field type `{F}` is not stored as one",
    label = "a prefix of a string attribute",
    note = "on a number attribute, use a range instead (`_between`, `_ge`, `_lt`, ...)"
)]
pub trait AttrPrefix<F> {
    /// The prefix as a stored value.
    fn prefix_value(&self) -> AttributeValue;
}

/// The attribute types stored as strings, which `begins_with` applies to (and an `Option` of
/// them).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not stored as a string: `begins_with` applies to string attributes only",
    label = "`begins_with` on an attribute of type `{Self}`",
    note = "on a number attribute, use a range instead (`_between`, `_ge`, `_lt`, ...)"
)]
pub trait TextAttribute: IndexAttribute {}

impl TextAttribute for String {}
impl TextAttribute for char {}
#[cfg(feature = "uuid")]
impl TextAttribute for uuid::Uuid {}
#[cfg(feature = "chrono")]
impl TextAttribute for chrono::NaiveDate {}

impl<T: TextAttribute + IndexAttribute<Value = T>> TextAttribute for Option<T> {}

impl<F: TextAttribute> AttrPrefix<F> for &str {
    fn prefix_value(&self) -> AttributeValue {
        AttributeValue::S((*self).to_owned())
    }
}

impl<F: TextAttribute> AttrPrefix<F> for String {
    fn prefix_value(&self) -> AttributeValue {
        AttributeValue::S(self.clone())
    }
}

/// The order DynamoDB sorts two key values of the same type in: strings and binaries by
/// their bytes, numbers by value. `None` for values of different or non-key types, and for
/// a malformed number.
pub(crate) fn compare(a: &AttributeValue, b: &AttributeValue) -> Option<Ordering> {
    match (a, b) {
        (AttributeValue::S(a), AttributeValue::S(b)) => Some(a.as_bytes().cmp(b.as_bytes())),
        (AttributeValue::B(a), AttributeValue::B(b)) => Some(a.as_ref().cmp(b.as_ref())),
        (AttributeValue::N(a), AttributeValue::N(b)) => {
            Some(check_number(a).ok()?.value_cmp(&check_number(b).ok()?))
        }
        _ => None,
    }
}

/// The length of a key value in bytes, and whether it is empty (strings and binaries).
pub(crate) fn key_value_len(v: &AttributeValue) -> usize {
    match v {
        AttributeValue::S(s) => s.len(),
        AttributeValue::B(b) => b.as_ref().len(),
        AttributeValue::N(n) => n.len(),
        _ => 0,
    }
}

/// True for an empty string or binary, which no key attribute can hold.
pub(crate) fn is_empty_key_value(v: &AttributeValue) -> bool {
    matches!(v, AttributeValue::S(s) if s.is_empty())
        || matches!(v, AttributeValue::B(b) if b.as_ref().is_empty())
}

/// Checks a value of key attribute `attr` (of the partition key when `in_pk`) of a
/// multi-attribute index as DynamoDB would: the declared type, not empty, not too long.
pub(crate) fn check_index_value(
    entity: &'static str,
    attr: &KeyAttr,
    in_pk: bool,
    v: &AttributeValue,
) -> Result<(), Error> {
    let fits = attr.kind.holds(v);
    let max = if in_pk { MAX_PARTITION_KEY_BYTES } else { MAX_SORT_KEY_BYTES };
    let len = key_value_len(v);
    let problem = if !fits {
        KeyProblem::WrongType { expected: attr.kind.as_str() }
    } else if is_empty_key_value(v) {
        KeyProblem::Empty
    } else if len > max {
        KeyProblem::TooLong { len, max }
    } else {
        return Ok(());
    };
    Err(Error::InvalidKey { entity, attribute: attr.name.to_owned(), problem })
}

/// Every key attribute of a multi-attribute index of `T`, with its index and whether it is
/// part of the partition key.
pub(crate) fn multi_index_attrs<T: Table>()
-> impl Iterator<Item = (&'static IndexDef, &'static KeyAttr, bool)> {
    T::INDEXES.iter().flat_map(|index| {
        let pk = index.pk_attrs.iter().map(move |a| (index, a, true));
        pk.chain(index.sk_attrs.iter().map(move |a| (index, a, false)))
    })
}

/// [`check_index_value`] on each key attribute of `T`'s multi-attribute indexes that `item`
/// holds (a `NULL` removed first: the item is then not in the index).
pub(crate) fn check_index_values<T: Table>(
    entity: &'static str,
    item: &mut crate::item::Item,
) -> Result<(), Error> {
    for (_, attr, in_pk) in multi_index_attrs::<T>() {
        if let Some(v) = super::vector::non_null(item, attr.name) {
            check_index_value(entity, attr, in_pk, v)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn n(v: impl ToString) -> AttributeValue {
        AttributeValue::N(v.to_string())
    }

    #[test]
    fn numbers_compare_as_numbers() {
        assert_eq!(compare(&n(9), &n(10)), Some(Ordering::Less));
        assert_eq!(compare(&n(-10), &n(-9)), Some(Ordering::Less));
        assert_eq!(compare(&n("1.50"), &n("1.5")), Some(Ordering::Equal));
        assert_eq!(compare(&n("0"), &n("-0")), Some(Ordering::Equal));
        assert_eq!(compare(&n("1e2"), &n("99")), Some(Ordering::Greater));
        assert_eq!(compare(&n("0.01"), &n("0.1")), Some(Ordering::Less));
        assert_eq!(compare(&n("x"), &n("1")), None);
        assert_eq!(compare(&n(1), &AttributeValue::S("1".into())), None);
    }

    proptest! {
        #[test]
        fn integer_order(a in any::<i64>(), b in any::<i64>()) {
            prop_assert_eq!(compare(&n(a), &n(b)), Some(a.cmp(&b)));
        }

        #[test]
        fn values_are_what_serde_writes(s in ".*", c in any::<char>(), i in any::<i64>(), u in any::<u64>()) {
            prop_assert_eq!(s.value(), crate::item::to_value(&s).ok());
            prop_assert_eq!(c.value(), crate::item::to_value(&c).ok());
            prop_assert_eq!(i.value(), crate::item::to_value(&i).ok());
            prop_assert_eq!(u.value(), crate::item::to_value(&u).ok());
        }
    }

    #[cfg(all(feature = "uuid", feature = "chrono"))]
    #[test]
    fn uuid_and_date_are_what_serde_writes() {
        let id = uuid::Uuid::from_u128(0x0123_4567_89ab_cdef_0123_4567_89ab_cdef);
        assert_eq!(id.value(), crate::item::to_value(&id).ok());
        let day = chrono::NaiveDate::from_ymd_opt(2025, 11, 3).unwrap_or_default();
        assert_eq!(day.value(), crate::item::to_value(&day).ok());
    }
}
