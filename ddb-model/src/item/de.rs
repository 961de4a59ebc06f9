//! Deserialization straight from the SDK's attribute values.
//!
//! `serde_dynamo::from_item` first converts the SDK item into its own attribute values (every
//! map rebuilt, every key hashed again), then deserializes those. This deserializer reads the
//! SDK's values directly, doing exactly what serde_dynamo's deserializer does for the value
//! shapes structs are made of (strings, numbers, booleans, `NULL`, lists, maps, unit enum
//! variants). For anything else (sets, binaries, `deserialize_any`, a value of another shape
//! than the one asked for, a number that does not parse) it hands that one value to
//! serde_dynamo's deserializer, so results and errors are serde_dynamo's.

use std::collections::hash_map;

use aws_sdk_dynamodb::types::AttributeValue;
use serde::de::{self, DeserializeOwned, DeserializeSeed, Error as _, IntoDeserializer, Visitor};

use super::Item;

type Error = serde_dynamo::Error;

/// Reads `item` as a `T`.
pub(crate) fn from_item<T: DeserializeOwned>(item: Item) -> Result<T, Error> {
    T::deserialize(Direct(AttributeValue::M(item)))
}

/// Reads one attribute value as a `T`.
pub(crate) fn from_value<T: DeserializeOwned>(value: AttributeValue) -> Result<T, Error> {
    T::deserialize(Direct(value))
}

/// serde_dynamo's deserializer for one value.
fn theirs(value: AttributeValue) -> Result<serde_dynamo::Deserializer, Error> {
    if value.is_unknown() {
        // serde_dynamo's conversion panics on a value type the SDK does not know.
        return Err(Error::custom("an attribute value of a type this version does not know"));
    }
    Ok(serde_dynamo::Deserializer::from_attribute_value(value.into()))
}

/// Deserializes one SDK attribute value.
struct Direct(AttributeValue);

/// Hands the call to serde_dynamo.
macro_rules! delegate {
    ($self:ident.$method:ident($($arg:expr),*)) => {
        de::Deserializer::$method(theirs($self.0)?, $($arg),*)
    };
}

macro_rules! number {
    ($($method:ident => $visit:ident: $t:ty),*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
            if let AttributeValue::N(n) = &self.0 {
                if let Ok(v) = n.parse::<$t>() {
                    return visitor.$visit(v);
                }
            }
            delegate!(self.$method(visitor))
        }
    )*};
}

/// Deserializer methods that match the value against the arms given (`$v` names the
/// visitor for them) and hand every other value to serde_dynamo.
macro_rules! direct {
    ($v:ident; $($method:ident($($arg:ident: $t:ty),*) { $($pat:pat => $body:expr),* })*) => {$(
        fn $method<V: Visitor<'de>>(self, $($arg: $t,)* $v: V) -> Result<V::Value, Error> {
            match self.0 {
                $($pat => $body,)*
                _ => delegate!(self.$method($($arg,)* $v)),
            }
        }
    )*};
}

impl<'de> de::Deserializer<'de> for Direct {
    type Error = Error;

    number!(
        deserialize_i8 => visit_i8: i8, deserialize_i16 => visit_i16: i16,
        deserialize_i32 => visit_i32: i32, deserialize_i64 => visit_i64: i64,
        deserialize_u8 => visit_u8: u8, deserialize_u16 => visit_u16: u16,
        deserialize_u32 => visit_u32: u32, deserialize_u64 => visit_u64: u64,
        deserialize_f32 => visit_f32: f32, deserialize_f64 => visit_f64: f64,
        // serde_dynamo refuses 128-bit integers; `item::ser` writes them as numbers.
        deserialize_i128 => visit_i128: i128, deserialize_u128 => visit_u128: u128
    );

    // Each method reads the shapes it names itself, and hands any other to serde_dynamo.
    direct!(visitor;
        deserialize_any() {}
        deserialize_ignored_any() {}
        deserialize_char() {}
        deserialize_bytes() {}
        deserialize_byte_buf() {}
        deserialize_bool() { AttributeValue::Bool(b) => visitor.visit_bool(b) }
        deserialize_str() { AttributeValue::S(s) => visitor.visit_string(s) }
        deserialize_string() { AttributeValue::S(s) => visitor.visit_string(s) }
        deserialize_identifier() { AttributeValue::S(s) => visitor.visit_string(s) }
        deserialize_unit() { AttributeValue::Null(true) => visitor.visit_unit() }
        deserialize_unit_struct(name: &'static str) {
            AttributeValue::Null(true) => visitor.visit_unit()
        }
        deserialize_seq() { AttributeValue::L(list) => visitor.visit_seq(Seq(list.into_iter())) }
        deserialize_map() { AttributeValue::M(map) => visitor.visit_map(Map::new(map)) }
        deserialize_struct(name: &'static str, fields: &'static [&'static str]) {
            AttributeValue::M(map) => visitor.visit_map(Map::new(map)),
            AttributeValue::L(list) => visitor.visit_seq(Seq(list.into_iter()))
        }
        deserialize_enum(name: &'static str, variants: &'static [&'static str]) {
            AttributeValue::S(s) => visitor.visit_enum(s.into_deserializer())
        }
    );

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            AttributeValue::Null(true) => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }
    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        visitor.visit_newtype_struct(self)
    }
    fn deserialize_tuple<V: Visitor<'de>>(
        self,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.deserialize_seq(visitor)
    }
    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.deserialize_seq(visitor)
    }
}

/// The elements of a list.
struct Seq(std::vec::IntoIter<AttributeValue>);

impl<'de> de::SeqAccess<'de> for Seq {
    type Error = Error;
    fn next_element_seed<S: DeserializeSeed<'de>>(
        &mut self,
        seed: S,
    ) -> Result<Option<S::Value>, Error> {
        match self.0.next() {
            Some(value) => seed.deserialize(Direct(value)).map(Some),
            None => Ok(None),
        }
    }
    fn size_hint(&self) -> Option<usize> {
        Some(self.0.len())
    }
}

/// The entries of a map.
struct Map {
    iter: hash_map::IntoIter<String, AttributeValue>,
    value: Option<AttributeValue>,
}

impl Map {
    fn new(map: Item) -> Self {
        Map { iter: map.into_iter(), value: None }
    }
}

impl<'de> de::MapAccess<'de> for Map {
    type Error = Error;
    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Error> {
        match self.iter.next() {
            Some((key, value)) => {
                self.value = Some(value);
                seed.deserialize(MapKey(key)).map(Some)
            }
            None => Ok(None),
        }
    }
    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Error> {
        match self.value.take() {
            Some(value) => seed.deserialize(Direct(value)),
            None => Err(Error::custom("a map value was asked for before its key")),
        }
    }
    fn size_hint(&self) -> Option<usize> {
        Some(self.iter.len())
    }
}

/// A map key (or struct field name), as serde_dynamo reads it: as a string, or parsed as an
/// integer or a boolean when the key type asks for one.
struct MapKey(String);

/// serde_dynamo's error for a key that is not the number (`expected_num`) or the boolean
/// (`!expected_num`) its type asks for. Taken from serde_dynamo itself, so it is the same
/// error value.
fn key_error(expected_num: bool) -> Error {
    let null = serde_dynamo::AttributeValue::Null(true);
    let result = if expected_num {
        serde_dynamo::from_attribute_value::<_, u8>(null).map(|_| ())
    } else {
        serde_dynamo::from_attribute_value::<_, String>(null).map(|_| ())
    };
    result.err().unwrap_or_else(|| Error::custom("invalid map key"))
}

macro_rules! key_number {
    ($($method:ident => $visit:ident),*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
            match self.0.parse() {
                Ok(n) => visitor.$visit(n),
                Err(_) => Err(key_error(true)),
            }
        }
    )*};
}

impl<'de> de::Deserializer<'de> for MapKey {
    type Error = Error;

    key_number!(
        deserialize_i8 => visit_i8, deserialize_i16 => visit_i16, deserialize_i32 => visit_i32,
        deserialize_i64 => visit_i64, deserialize_i128 => visit_i128,
        deserialize_u8 => visit_u8, deserialize_u16 => visit_u16, deserialize_u32 => visit_u32,
        deserialize_u64 => visit_u64, deserialize_u128 => visit_u128
    );

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_string(self.0)
    }
    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0.as_str() {
            "true" => visitor.visit_bool(true),
            "false" => visitor.visit_bool(false),
            _ => Err(key_error(false)),
        }
    }
    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        Direct(AttributeValue::S(self.0)).deserialize_enum(name, variants, visitor)
    }
    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        visitor.visit_newtype_struct(self)
    }

    serde::forward_to_deserialize_any! {
        f32 f64 char str string bytes byte_buf option unit unit_struct seq tuple
        tuple_struct map struct identifier ignored_any
    }
}
