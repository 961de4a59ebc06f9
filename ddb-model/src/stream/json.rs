//! DynamoDB JSON: attribute values as the Lambda event writes them (`{"S": "text"}`,
//! `{"N": "1.5"}`, `{"B": "<base64>"}`, `{"M": {..}}`, ...), for serde.

use std::collections::HashMap;
use std::fmt;

use aws_sdk_dynamodb::primitives::Blob;
use aws_sdk_dynamodb::types::AttributeValue;
use aws_smithy_types::base64;
use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::Serializer;
use serde::{Deserialize, Serialize};

use crate::item::Item;
use crate::item::json::ItemRef;
#[cfg(test)]
use crate::item::json::ValueRef;

/// An attribute value read from or written as DynamoDB JSON.
pub(super) struct Value(pub(super) AttributeValue);

impl<'de> Deserialize<'de> for Value {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(ValueVisitor)
    }
}

struct ValueVisitor;

const TYPES: &[&str] = &["S", "N", "B", "BOOL", "NULL", "SS", "NS", "BS", "L", "M"];

fn blob<E: de::Error>(text: &str) -> Result<Blob, E> {
    base64::decode(text)
        .map(Blob::new)
        .map_err(|e| E::custom(format_args!("a binary value that is not base64: {e}")))
}

impl<'de> Visitor<'de> for ValueVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a DynamoDB JSON attribute value such as {\"S\": \"text\"}")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let Some(kind) = map.next_key::<String>()? else {
            return Err(de::Error::custom("an empty attribute value {}"));
        };
        let value = match kind.as_str() {
            "S" => AttributeValue::S(map.next_value()?),
            "N" => AttributeValue::N(map.next_value()?),
            "B" => AttributeValue::B(blob(&map.next_value::<String>()?)?),
            "BOOL" => AttributeValue::Bool(map.next_value()?),
            "NULL" => AttributeValue::Null(map.next_value()?),
            "SS" => AttributeValue::Ss(map.next_value()?),
            "NS" => AttributeValue::Ns(map.next_value()?),
            "BS" => {
                let texts: Vec<String> = map.next_value()?;
                AttributeValue::Bs(texts.iter().map(|t| blob(t)).collect::<Result<_, _>>()?)
            }
            "L" => {
                let list: Vec<Value> = map.next_value()?;
                AttributeValue::L(list.into_iter().map(|v| v.0).collect())
            }
            "M" => AttributeValue::M(map.next_value::<ItemDe>()?.0),
            other => return Err(de::Error::unknown_field(other, TYPES)),
        };
        if let Some(extra) = map.next_key::<String>()? {
            return Err(de::Error::custom(format_args!(
                "an attribute value with two types ({kind} and {extra})"
            )));
        }
        Ok(Value(value))
    }
}

/// An item read from DynamoDB JSON.
struct ItemDe(Item);

impl<'de> Deserialize<'de> for ItemDe {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ItemVisitor;
        impl<'de> Visitor<'de> for ItemVisitor {
            type Value = ItemDe;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an item: a map of attribute names to DynamoDB JSON values")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ItemDe, A::Error> {
                let mut item = HashMap::with_capacity(map.size_hint().unwrap_or(0).min(64));
                while let Some((name, value)) = map.next_entry::<String, Value>()? {
                    if item.insert(name, value.0).is_some() {
                        return Err(de::Error::custom("an item names one attribute twice"));
                    }
                }
                Ok(ItemDe(item))
            }
            fn visit_unit<E: de::Error>(self) -> Result<ItemDe, E> {
                Ok(ItemDe(Item::new()))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, _seq: A) -> Result<ItemDe, A::Error> {
                Err(de::Error::custom("an item must be a map, not a list"))
            }
        }
        deserializer.deserialize_any(ItemVisitor)
    }
}

/// `#[serde(with)]` for an [`Item`] field.
pub(super) mod item {
    use super::*;

    pub(crate) fn serialize<S: Serializer>(item: &Item, serializer: S) -> Result<S::Ok, S::Error> {
        ItemRef(item).serialize(serializer)
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Item, D::Error> {
        Ok(ItemDe::deserialize(deserializer)?.0)
    }
}

/// `#[serde(with)]` for an `Option<Item>` field (`null` or absent is `None`).
pub(super) mod opt_item {
    use super::*;

    pub(crate) fn serialize<S: Serializer>(
        item: &Option<Item>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        match item {
            Some(item) => serializer.serialize_some(&ItemRef(item)),
            None => serializer.serialize_none(),
        }
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<Item>, D::Error> {
        Ok(Option::<ItemDe>::deserialize(deserializer)?.map(|i| i.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(json: &str) -> Result<AttributeValue, serde_json::Error> {
        serde_json::from_str::<Value>(json).map(|v| v.0)
    }

    fn write(value: &AttributeValue) -> String {
        serde_json::to_string(&ValueRef(value)).unwrap_or_default()
    }

    #[test]
    fn every_type_round_trips() {
        let mut m = Item::new();
        m.insert("a".into(), AttributeValue::S("x".into()));
        let values = [
            AttributeValue::S("é\"#\\".into()),
            AttributeValue::N("-1.5E3".into()),
            AttributeValue::B(Blob::new(vec![0, 255, 7])),
            AttributeValue::Bool(true),
            AttributeValue::Null(true),
            AttributeValue::Ss(vec!["a".into(), "b".into()]),
            AttributeValue::Ns(vec!["1".into()]),
            AttributeValue::Bs(vec![Blob::new(vec![1]), Blob::new(vec![])]),
            AttributeValue::L(vec![AttributeValue::N("1".into()), AttributeValue::M(m.clone())]),
            AttributeValue::M(m),
        ];
        for value in values {
            let text = write(&value);
            assert_eq!(read(&text).ok(), Some(value), "{text}");
        }
        assert_eq!(write(&AttributeValue::B(Blob::new(b"hi".to_vec()))), r#"{"B":"aGk="}"#);
    }

    #[test]
    fn malformed_values_are_errors() {
        for bad in [
            "{}",
            r#"{"S": 1}"#,
            r#"{"X": "a"}"#,
            r#"{"S": "a", "N": "1"}"#,
            r#"{"B": "not base64!"}"#,
            r#"{"BS": ["AA==", "%%"]}"#,
            r#"{"M": [1]}"#,
            r#"{"L": {"S": "a"}}"#,
            r#""text""#,
            "null",
        ] {
            assert!(read(bad).is_err(), "{bad}");
        }
    }
}
