//! DynamoDB JSON, written: attribute values and items as the service's API and the Lambda
//! event write them (`{"S": "text"}`, `{"N": "1.5"}`, `{"B": "<base64>"}`, `{"M": {..}}`,
//! ...), for serde. Stream records read them back (`stream/json.rs`); requests are printed
//! with them (`intercept::Request`).

use aws_sdk_dynamodb::types::AttributeValue;
use aws_smithy_types::base64;
use serde::Serialize;
use serde::ser::{Error as _, SerializeMap, Serializer};

use super::Item;

/// A borrowed attribute value written as DynamoDB JSON.
pub(crate) struct ValueRef<'a>(pub(crate) &'a AttributeValue);

/// A borrowed item written as DynamoDB JSON (names sorted).
pub(crate) struct ItemRef<'a>(pub(crate) &'a Item);

impl Serialize for ItemRef<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        // Sorted, so that the same item always writes the same text.
        let mut names: Vec<&String> = self.0.keys().collect();
        names.sort();
        let mut map = serializer.serialize_map(Some(names.len()))?;
        for name in names {
            if let Some(value) = self.0.get(name) {
                map.serialize_entry(name, &ValueRef(value))?;
            }
        }
        map.end()
    }
}

impl Serialize for ValueRef<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(1))?;
        match self.0 {
            AttributeValue::S(s) => map.serialize_entry("S", s)?,
            AttributeValue::N(n) => map.serialize_entry("N", n)?,
            AttributeValue::B(b) => map.serialize_entry("B", &base64::encode(b.as_ref()))?,
            AttributeValue::Bool(b) => map.serialize_entry("BOOL", b)?,
            AttributeValue::Null(n) => map.serialize_entry("NULL", n)?,
            AttributeValue::Ss(v) => map.serialize_entry("SS", v)?,
            AttributeValue::Ns(v) => map.serialize_entry("NS", v)?,
            AttributeValue::Bs(v) => {
                let texts: Vec<String> = v.iter().map(|b| base64::encode(b.as_ref())).collect();
                map.serialize_entry("BS", &texts)?
            }
            AttributeValue::L(v) => {
                let list: Vec<ValueRef<'_>> = v.iter().map(ValueRef).collect();
                map.serialize_entry("L", &list)?
            }
            AttributeValue::M(m) => map.serialize_entry("M", &ItemRef(m))?,
            _ => return Err(S::Error::custom("an attribute value of a type DynamoDB JSON lacks")),
        }
        map.end()
    }
}
