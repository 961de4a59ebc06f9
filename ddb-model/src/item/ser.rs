//! Serialization straight into the SDK's attribute values: the one place the crate turns a
//! caller's value into DynamoDB attributes (items, expression values).
//!
//! `serde_dynamo::to_item` builds its own attribute values and then converts every one of
//! them (every map rebuilt, every key hashed again) into the SDK's; and it panics on some
//! values (a map key that serialises as a sequence, a map or bytes reaches an
//! `unreachable!()`). This serializer writes the SDK's values directly and never panics,
//! following serde_dynamo's data model: numbers as `N` in their `to_string` form (`i128` and
//! `u128` too, which serde_dynamo refuses), strings and unit variants as `S`, units as
//! `NULL`, sequences and tuples as `L`, structs and maps as `M`, enum variants with data as a
//! one-entry `M`, serde_dynamo's `string_set` / `number_set` / `binary_set` newtypes as sets.
//! Its errors are serde_dynamo errors. Numbers are not judged here: `expr::check` refuses
//! what DynamoDB cannot store (`NaN`, too many digits, ...).
//!
//! One departure, what DynamoDB-Toolbox and ElectroDB do: a `None` held by a *member* (a
//! struct field or a map entry, at any depth) leaves the member out, unless [`Nulls`] asks
//! for serde_dynamo's `NULL` there; a `None` anywhere else (a list element, a newtype's or
//! enum variant's value, a whole value) is `NULL`, since its position is data.

use std::collections::HashMap;

use aws_sdk_dynamodb::primitives::Blob;
use aws_sdk_dynamodb::types::AttributeValue;
use serde::Serialize;
use serde::ser::{self, Error as _, Impossible};

use super::{Item, Nulls, take_variant};

type Error = serde_dynamo::Error;

/// The item of `value`, which must serialize as a map (a struct, usually); `nulls` says
/// which members keep a `None` as `NULL`.
pub(crate) fn to_item<T: Serialize + ?Sized>(value: &T, nulls: Nulls) -> Result<Item, Error> {
    let top = Direct { nulls: nulls.all, keep: nulls.fields, absent: nulls.absent };
    match value.serialize(top)? {
        Some(AttributeValue::M(item)) => Ok(item),
        _ => Err(theirs(serde_dynamo::to_item::<_, Item>(0u8).map(|_| ()))),
    }
}

/// The attribute value of `value` (`None` when `value` is a `None`); `nulls`: members keep a
/// `None` as `NULL`.
pub(crate) fn to_value<T: Serialize + ?Sized>(
    value: &T,
    nulls: bool,
) -> Result<Option<AttributeValue>, Error> {
    value.serialize(Direct { nulls, keep: &[], absent: None })
}

/// `NULL`, what a `None` is where it is not left out.
const NULL: AttributeValue = AttributeValue::Null(true);

/// serde_dynamo's error for a case it reports with an error type of its own (the result of
/// a call on a constant value that fails, and cannot panic).
fn theirs(result: Result<(), Error>) -> Error {
    match result {
        Err(e) => e,
        Ok(()) => Error::custom("unsupported value"),
    }
}

/// serde_dynamo's KeyMustBeAString (from a map with a unit key, which it refuses without
/// panicking).
fn key_must_be_a_string() -> Error {
    let unit_key: HashMap<(), u8> = [((), 0)].into();
    theirs(
        serde_dynamo::to_attribute_value::<_, serde_dynamo::AttributeValue>(unit_key).map(|_| ()),
    )
}

/// The set newtypes of serde_dynamo (`#[serde(with = "serde_dynamo::string_set")]`, ...),
/// by the names they serialize with.
const STRING_SET: &str = "\u{037E}STRINGSET\u{037E}";
const NUMBER_SET: &str = "\u{037E}NUMBERSET\u{037E}";
const BINARY_SET: &str = "\u{037E}BYTESSET\u{037E}";

/// The error of an empty `ddb_model::set` field, which a map or struct leaves out (DynamoDB
/// has no empty set) and anything else reports.
fn empty_auto_set() -> Error {
    Error::custom("an empty set (`ddb_model::set`) can only be a field or map entry, left out")
}

/// The set type a `ddb_model::set` value's elements ask for: strings, numbers or bytes.
fn auto_set(value: AttributeValue) -> Result<AttributeValue, Error> {
    let list = match value {
        AttributeValue::L(list) if !list.is_empty() => list,
        AttributeValue::L(_) | AttributeValue::Null(true) => return Err(empty_auto_set()),
        // Already a set (a set type that serializes itself as one).
        v @ (AttributeValue::Ss(_) | AttributeValue::Ns(_) | AttributeValue::Bs(_)) => {
            return Ok(v);
        }
        _ => return Err(Error::custom("`ddb_model::set` needs a set or sequence")),
    };
    let name = match list.first() {
        Some(AttributeValue::N(_)) => NUMBER_SET,
        Some(AttributeValue::B(_)) => BINARY_SET,
        _ => STRING_SET,
    };
    into_set(name, AttributeValue::L(list))
}

/// Inserts the serialization of a field or map entry, leaving out an empty `ddb_model::set`
/// and, unless `nulls`, a `None`.
fn insert_field(
    map: &mut HashMap<String, AttributeValue>,
    key: String,
    value: Result<Option<AttributeValue>, Error>,
    nulls: bool,
) -> Result<(), Error> {
    match value {
        Ok(Some(v)) => {
            map.insert(key, v);
            Ok(())
        }
        Ok(None) if nulls => {
            map.insert(key, NULL);
            Ok(())
        }
        Ok(None) => Ok(()),
        Err(e) if e == empty_auto_set() => Ok(()),
        Err(e) => Err(e),
    }
}

/// A list turned into the set newtype `name` asks for; `value` unchanged for other names.
fn into_set(name: &str, value: AttributeValue) -> Result<AttributeValue, Error> {
    use serde_dynamo::{binary_set::BinarySet, number_set::NumberSet, string_set::StringSet};
    if name == crate::item::set::AUTO_SET {
        return auto_set(value);
    }
    let kind = match name {
        STRING_SET | NUMBER_SET | BINARY_SET => name,
        _ => return Ok(value),
    };
    let AttributeValue::L(list) = value else {
        // serde_dynamo's NotSetlike.
        return Err(theirs(
            serde_dynamo::to_attribute_value::<_, serde_dynamo::AttributeValue>(StringSet(0u8))
                .map(|_| ()),
        ));
    };
    // The elements, or serde_dynamo's "expected type" error for an element of another type
    // (made only then, from a one-element set of the wrong type).
    fn elements<T>(
        list: Vec<AttributeValue>,
        element: fn(AttributeValue) -> Option<T>,
        wrong: fn() -> Result<serde_dynamo::AttributeValue, Error>,
    ) -> Result<Vec<T>, Error> {
        list.into_iter().map(|v| element(v).ok_or_else(|| theirs(wrong().map(drop)))).collect()
    }
    use serde_dynamo::to_attribute_value as theirs_of;
    match kind {
        STRING_SET => {
            elements(list, take_variant!(S), || theirs_of(StringSet([0u8]))).map(AttributeValue::Ss)
        }
        NUMBER_SET => {
            elements(list, take_variant!(N), || theirs_of(NumberSet(["x"]))).map(AttributeValue::Ns)
        }
        _ => {
            elements(list, take_variant!(B), || theirs_of(BinarySet([0u8]))).map(AttributeValue::Bs)
        }
    }
}

/// Serializes one value into an SDK attribute value, `None` for a `None` (which the member
/// holding it leaves out, and anything else stores as `NULL`).
#[derive(Clone, Copy)]
struct Direct {
    /// Members keep a `None` as `NULL`.
    nulls: bool,
    /// The members of this value (the item) that keep a `None` as `NULL`, and everything
    /// inside them.
    keep: &'static [&'static str],
    /// The members of this value (the item) that leave a `None` out (`None`: every one).
    absent: Option<&'static [&'static str]>,
}

impl Direct {
    /// The serializer of a part of this value other than a member.
    fn inner(self) -> Direct {
        Direct { nulls: self.nulls, keep: &[], absent: None }
    }

    /// The serializer of the member `key` of this value.
    fn member(self, key: &str) -> Direct {
        Direct { nulls: self.nulls || self.keep.contains(&key), keep: &[], absent: None }
    }

    /// True when the member `key` of this value keeps a `None` of its own as `NULL`.
    fn keeps_none(self, key: &str) -> bool {
        self.nulls || self.keep.contains(&key) || self.absent.is_some_and(|a| !a.contains(&key))
    }
}

/// Serializer methods that write a number's `to_string` form, wrapped by `$wrap` (and
/// `$some`: `Some` for values, nothing for map keys).
macro_rules! number {
    ($some:path, $wrap:expr; $($method:ident: $t:ty),*) => {$(
        fn $method(self, v: $t) -> Result<Self::Ok, Error> {
            Ok($some($wrap(v.to_string())))
        }
    )*};
}

/// Nothing: the identity, for [`number!`] in the map key serializer.
fn same(s: String) -> String {
    s
}

impl ser::Serializer for Direct {
    type Ok = Option<AttributeValue>;
    type Error = Error;
    type SerializeSeq = Seq;
    type SerializeTuple = Seq;
    type SerializeTupleStruct = Seq;
    type SerializeTupleVariant = Variant<Seq>;
    type SerializeMap = Map;
    type SerializeStruct = Map;
    type SerializeStructVariant = Variant<Map>;

    number!(Some, AttributeValue::N; serialize_i8: i8, serialize_i16: i16, serialize_i32: i32);
    number!(Some, AttributeValue::N; serialize_i64: i64, serialize_i128: i128, serialize_u8: u8);
    number!(Some, AttributeValue::N; serialize_u16: u16, serialize_u32: u32, serialize_u64: u64);
    number!(Some, AttributeValue::N; serialize_u128: u128, serialize_f32: f32, serialize_f64: f64);

    fn serialize_bool(self, v: bool) -> Result<Self::Ok, Error> {
        Ok(Some(AttributeValue::Bool(v)))
    }
    fn serialize_char(self, v: char) -> Result<Self::Ok, Error> {
        Ok(Some(AttributeValue::S(v.to_string())))
    }
    fn serialize_str(self, v: &str) -> Result<Self::Ok, Error> {
        Ok(Some(AttributeValue::S(v.to_owned())))
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<Self::Ok, Error> {
        Ok(Some(AttributeValue::B(Blob::new(v))))
    }
    fn serialize_none(self) -> Result<Self::Ok, Error> {
        Ok(None)
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<Self::Ok, Error> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<Self::Ok, Error> {
        Ok(Some(NULL))
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<Self::Ok, Error> {
        Ok(Some(NULL))
    }
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<Self::Ok, Error> {
        Ok(Some(AttributeValue::S(variant.to_owned())))
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        name: &'static str,
        value: &T,
    ) -> Result<Self::Ok, Error> {
        // A newtype around a `None` is `NULL`: serde reads a missing newtype as an error.
        into_set(name, value.serialize(self)?.unwrap_or(NULL)).map(Some)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<Self::Ok, Error> {
        let mut map = HashMap::with_capacity(1);
        map.insert(variant.to_owned(), value.serialize(self.inner())?.unwrap_or(NULL));
        Ok(Some(AttributeValue::M(map)))
    }
    fn serialize_seq(self, len: Option<usize>) -> Result<Seq, Error> {
        Ok(Seq::new(self, len.unwrap_or(0)))
    }
    fn serialize_tuple(self, len: usize) -> Result<Seq, Error> {
        Ok(Seq::new(self, len))
    }
    fn serialize_tuple_struct(self, _name: &'static str, len: usize) -> Result<Seq, Error> {
        Ok(Seq::new(self, len))
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Variant<Seq>, Error> {
        Ok(Variant { variant, inner: Seq::new(self, len) })
    }
    fn serialize_map(self, len: Option<usize>) -> Result<Map, Error> {
        Ok(Map::new(self, len.unwrap_or(0)))
    }
    fn serialize_struct(self, _name: &'static str, len: usize) -> Result<Map, Error> {
        Ok(Map::new(self, len))
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Variant<Map>, Error> {
        Ok(Variant { variant, inner: Map::new(self.inner(), len) })
    }
}

/// A list being serialized: its elements keep their positions, a `None` is `NULL`.
struct Seq {
    list: Vec<AttributeValue>,
    of: Direct,
}

impl Seq {
    fn new(of: Direct, len: usize) -> Seq {
        Seq { list: Vec::with_capacity(len), of: of.inner() }
    }

    fn push<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.list.push(value.serialize(self.of)?.unwrap_or(NULL));
        Ok(())
    }
}

/// `Seq` is the list of a sequence, a tuple and a tuple struct alike.
macro_rules! seq {
    ($($trait:ident::$method:ident),*) => {$(
        impl ser::$trait for Seq {
            type Ok = Option<AttributeValue>;
            type Error = Error;
            fn $method<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
                self.push(value)
            }
            fn end(self) -> Result<Self::Ok, Error> {
                Ok(Some(AttributeValue::L(self.list)))
            }
        }
    )*};
}

seq!(SerializeSeq::serialize_element, SerializeTuple::serialize_element);
seq!(SerializeTupleStruct::serialize_field);

/// A map or struct being serialized: a member holding a `None` is left out, unless `of`
/// keeps it.
struct Map {
    map: HashMap<String, AttributeValue>,
    key: Option<String>,
    of: Direct,
}

impl Map {
    fn new(of: Direct, len: usize) -> Map {
        Map { map: HashMap::with_capacity(len), key: None, of }
    }

    fn insert<T: Serialize + ?Sized>(&mut self, key: String, value: &T) -> Result<(), Error> {
        let (of, nulls) = (self.of.member(&key), self.of.keeps_none(&key));
        insert_field(&mut self.map, key, value.serialize(of), nulls)
    }
}

impl ser::SerializeMap for Map {
    type Ok = Option<AttributeValue>;
    type Error = Error;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Error> {
        if self.key.is_some() {
            return Err(Error::custom("serialize_key called twice"));
        }
        self.key = Some(key.serialize(MapKey)?);
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        let key = self
            .key
            .take()
            .ok_or_else(|| Error::custom("serialize_value called before serialize_key"))?;
        self.insert(key, value)
    }
    fn serialize_entry<K: Serialize + ?Sized, V: Serialize + ?Sized>(
        &mut self,
        key: &K,
        value: &V,
    ) -> Result<(), Error> {
        let key = key.serialize(MapKey)?;
        self.insert(key, value)
    }
    fn end(self) -> Result<Self::Ok, Error> {
        Ok(Some(AttributeValue::M(self.map)))
    }
}

impl ser::SerializeStruct for Map {
    type Ok = Option<AttributeValue>;
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        self.insert(key.to_owned(), value)
    }
    fn end(self) -> Result<Self::Ok, Error> {
        Ok(Some(AttributeValue::M(self.map)))
    }
}

/// An enum variant with fields: a one-entry map from the variant name to its fields.
struct Variant<T> {
    variant: &'static str,
    inner: T,
}

impl<T> Variant<T> {
    fn wrap(variant: &'static str, value: AttributeValue) -> Option<AttributeValue> {
        let mut map = HashMap::with_capacity(1);
        map.insert(variant.to_owned(), value);
        Some(AttributeValue::M(map))
    }
}

impl ser::SerializeTupleVariant for Variant<Seq> {
    type Ok = Option<AttributeValue>;
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.inner.push(value)
    }
    fn end(self) -> Result<Self::Ok, Error> {
        Ok(Self::wrap(self.variant, AttributeValue::L(self.inner.list)))
    }
}

impl ser::SerializeStructVariant for Variant<Map> {
    type Ok = Option<AttributeValue>;
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        ser::SerializeStruct::serialize_field(&mut self.inner, key, value)
    }
    fn end(self) -> Result<Self::Ok, Error> {
        Ok(Self::wrap(self.variant, AttributeValue::M(self.inner.map)))
    }
}

/// A map key: strings, characters, integers, booleans and unit variants become strings, as in
/// serde_dynamo; anything else is an error (where serde_dynamo panics for sequences, maps and
/// bytes).
struct MapKey;

/// The map key serializer's methods for what cannot be a key: serde_dynamo's
/// KeyMustBeAString.
macro_rules! refuse {
    ($($method:ident$(<$T:ident>)?($($arg:ty),*) -> $ret:ty;)*) => {$(
        fn $method$(<$T: Serialize + ?Sized>)?(self, $(_: $arg),*) -> Result<$ret, Error> {
            Err(key_must_be_a_string())
        }
    )*};
}

impl ser::Serializer for MapKey {
    type Ok = String;
    type Error = Error;
    type SerializeSeq = Impossible<String, Error>;
    type SerializeTuple = Impossible<String, Error>;
    type SerializeTupleStruct = Impossible<String, Error>;
    type SerializeTupleVariant = Impossible<String, Error>;
    type SerializeMap = Impossible<String, Error>;
    type SerializeStruct = Impossible<String, Error>;
    type SerializeStructVariant = Impossible<String, Error>;

    number!(same, String::from; serialize_i8: i8, serialize_i16: i16, serialize_i32: i32);
    number!(same, String::from; serialize_i64: i64, serialize_i128: i128, serialize_u8: u8);
    number!(same, String::from; serialize_u16: u16, serialize_u32: u32, serialize_u64: u64);
    number!(same, String::from; serialize_u128: u128);

    fn serialize_str(self, v: &str) -> Result<String, Error> {
        Ok(v.to_owned())
    }
    fn serialize_char(self, v: char) -> Result<String, Error> {
        Ok(v.to_string())
    }
    fn serialize_bool(self, v: bool) -> Result<String, Error> {
        Ok(if v { "true" } else { "false" }.to_owned())
    }
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<String, Error> {
        Ok(variant.to_owned())
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<String, Error> {
        value.serialize(self)
    }
    refuse!(
        serialize_f32(f32) -> String;
        serialize_f64(f64) -> String;
        serialize_bytes(&[u8]) -> String;
        serialize_none() -> String;
        serialize_some<T>(&T) -> String;
        serialize_unit() -> String;
        serialize_unit_struct(&'static str) -> String;
        serialize_newtype_variant<T>(&'static str, u32, &'static str, &T) -> String;
        serialize_seq(Option<usize>) -> Self::SerializeSeq;
        serialize_tuple(usize) -> Self::SerializeTuple;
        serialize_tuple_struct(&'static str, usize) -> Self::SerializeTupleStruct;
        serialize_tuple_variant(&'static str, u32, &'static str, usize)
            -> Self::SerializeTupleVariant;
        serialize_map(Option<usize>) -> Self::SerializeMap;
        serialize_struct(&'static str, usize) -> Self::SerializeStruct;
        serialize_struct_variant(&'static str, u32, &'static str, usize)
            -> Self::SerializeStructVariant;
    );
}
