//! The direct conversions against serde_dynamo, both directions, on every shape of the
//! serde data model: the same items, the same values, the same errors.

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};

use aws_sdk_dynamodb::types::AttributeValue;

use super::{Item, Nulls, from_fields, to_fields, to_value, to_value_or_none};

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
enum Shape {
    Unit,
    Newtype(u32),
    Tuple(i8, String),
    Struct { a: bool, b: Option<f64> },
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
struct Wrapper(String);

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
struct UnitStruct;

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
struct Inner {
    x: i64,
    tags: Vec<String>,
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(untagged)]
enum Untagged {
    Num(u64),
    Text(String),
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
struct Everything {
    s: String,
    c: char,
    b: bool,
    i8: i8,
    i16: i16,
    i32: i32,
    i64: i64,
    u8: u8,
    u16: u16,
    u32: u32,
    u64: u64,
    f32: f32,
    f64: f64,
    none: Option<String>,
    some: Option<u32>,
    unit: (),
    unit_struct: UnitStruct,
    tuple: (u8, String, bool),
    list: Vec<Inner>,
    shapes: Vec<Shape>,
    newtype: Wrapper,
    by_name: BTreeMap<String, u64>,
    by_number: BTreeMap<u32, String>,
    by_bool: HashMap<bool, i8>,
    bytes: serde_bytes_like::Bytes,
    nested: Option<Box<Everything>>,
    untagged: Vec<Untagged>,
    #[serde(flatten)]
    flat: BTreeMap<String, String>,
    #[serde(with = "serde_dynamo::string_set")]
    string_set: Vec<String>,
    #[serde(with = "serde_dynamo::number_set")]
    number_set: Vec<u32>,
}

/// `Vec<u8>` serialized as bytes.
mod serde_bytes_like {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    #[derive(Debug, Clone, PartialEq)]
    pub(super) struct Bytes(pub(super) Vec<u8>);

    impl Serialize for Bytes {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            s.serialize_bytes(&self.0)
        }
    }

    impl<'de> Deserialize<'de> for Bytes {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct V;
            impl serde::de::Visitor<'_> for V {
                type Value = Bytes;
                fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                    f.write_str("bytes")
                }
                fn visit_bytes<E>(self, v: &[u8]) -> Result<Bytes, E> {
                    Ok(Bytes(v.to_vec()))
                }
                fn visit_byte_buf<E>(self, v: Vec<u8>) -> Result<Bytes, E> {
                    Ok(Bytes(v))
                }
            }
            d.deserialize_bytes(V)
        }
    }
}

fn everything(depth: u32) -> Everything {
    Everything {
        s: "text with # and %".into(),
        c: 'é',
        b: true,
        i8: -8,
        i16: -1600,
        i32: i32::MIN,
        i64: i64::MAX,
        u8: 255,
        u16: 65535,
        u32: 7,
        u64: u64::MAX,
        f32: 1.5,
        f64: -0.1,
        none: None,
        some: Some(3),
        unit: (),
        unit_struct: UnitStruct,
        tuple: (1, "two".into(), false),
        list: vec![Inner { x: -1, tags: vec!["a".into(), "b".into()] }],
        shapes: vec![
            Shape::Unit,
            Shape::Newtype(5),
            Shape::Tuple(-3, "t".into()),
            Shape::Struct { a: false, b: None },
        ],
        newtype: Wrapper("w".into()),
        by_name: [("k1".to_owned(), 1), ("k2".to_owned(), 2)].into(),
        by_number: [(10, "ten".to_owned()), (2, "two".to_owned())].into(),
        by_bool: [(true, 1), (false, 0)].into(),
        bytes: serde_bytes_like::Bytes(vec![0, 1, 2, 255]),
        nested: (depth > 0).then(|| Box::new(everything(depth - 1))),
        untagged: vec![Untagged::Num(42), Untagged::Text("x".into())],
        flat: [("extra".to_owned(), "flattened".to_owned())].into(),
        string_set: vec!["x".into(), "y".into()],
        number_set: vec![1, 2, 3],
    }
}

#[test]
fn serializes_like_serde_dynamo() {
    let value = everything(2);
    let theirs: Item = serde_dynamo::to_item(&value).unwrap();
    assert_eq!(to_fields(&value, Nulls::ALL).unwrap(), theirs);
}

#[test]
fn deserializes_like_serde_dynamo() {
    let value = everything(2);
    let item: Item = serde_dynamo::to_item(&value).unwrap();
    let ours: Everything = from_fields(item.clone()).unwrap();
    let theirs: Everything = serde_dynamo::from_item(item).unwrap();
    assert_eq!(ours, theirs);
    assert_eq!(ours, value);
}

#[test]
fn errors_are_serde_dynamo_errors() {
    let mut item: Item = serde_dynamo::to_item(everything(0)).unwrap();
    let cases: Vec<(&str, AttributeValue)> = vec![
        ("u8", AttributeValue::N("256".into())),
        ("u8", AttributeValue::S("7".into())),
        ("s", AttributeValue::N("1".into())),
        ("b", AttributeValue::S("true".into())),
        ("list", AttributeValue::S("x".into())),
        ("shapes", AttributeValue::L(vec![AttributeValue::S("Circle".into())])),
        ("by_number", {
            let mut m = HashMap::new();
            m.insert("ten".to_owned(), AttributeValue::S("x".into()));
            AttributeValue::M(m)
        }),
        ("by_bool", {
            let mut m = HashMap::new();
            m.insert("yes".to_owned(), AttributeValue::N("1".into()));
            AttributeValue::M(m)
        }),
    ];
    for (field, bad) in cases {
        let mut broken = item.clone();
        broken.insert(field.to_owned(), bad);
        let ours = from_fields::<Everything>(broken.clone()).unwrap_err();
        let theirs = serde_dynamo::from_item::<_, Everything>(broken).unwrap_err();
        assert_eq!(ours, theirs, "field {field}");
    }
    item.remove("s");
    let ours = from_fields::<Everything>(item.clone()).unwrap_err();
    let theirs = serde_dynamo::from_item::<_, Everything>(item).unwrap_err();
    assert_eq!(ours, theirs);
}

#[test]
fn unsupported_values_fall_back_to_serde_dynamo() {
    // A float map key: serde_dynamo's error.
    let by_float: HashMap<String, BTreeMap<u8, f32>> =
        [("m".to_owned(), [(1u8, 1.0f32)].into())].into();
    assert_eq!(
        to_fields(&by_float, Nulls::NONE).unwrap(),
        serde_dynamo::to_item::<_, Item>(&by_float).unwrap()
    );
    #[derive(Serialize)]
    struct FloatKeys {
        m: Vec<(f32, u8)>,
        k: HashMap<String, u8>,
    }
    let v = FloatKeys { m: vec![(1.0, 1)], k: HashMap::new() };
    assert_eq!(to_fields(&v, Nulls::NONE).unwrap(), serde_dynamo::to_item::<_, Item>(&v).unwrap());
    // Not a map at all.
    let ours = to_fields(&5u8, Nulls::NONE).unwrap_err();
    let theirs = serde_dynamo::to_item::<_, Item>(5u8).unwrap_err();
    assert_eq!(ours, theirs);
}

/// The features `chrono` and `uuid` turn on the crates' `serde` support: fields of the
/// re-exported types serialize without the user depending on the crates themselves.
#[cfg(all(feature = "chrono", feature = "uuid"))]
#[test]
fn reexported_chrono_and_uuid_types_serialize() {
    #[derive(Serialize, Deserialize, Debug, PartialEq)]
    struct Stamped {
        at: crate::chrono::DateTime<crate::chrono::Utc>,
        id: crate::uuid::Uuid,
    }
    let value = Stamped {
        at: crate::chrono::DateTime::from_timestamp(1_700_000_000, 5).unwrap(),
        id: crate::uuid::Uuid::from_u128(7),
    };
    let item = to_fields(&value, Nulls::NONE).unwrap();
    assert_eq!(from_fields::<Stamped>(item).unwrap(), value);
}

/// serde_dynamo's value with every map member holding `NULL` left out, at any depth (list
/// elements kept): what the default serialization stores for values without units.
fn members_left_out(value: AttributeValue) -> Option<AttributeValue> {
    match value {
        AttributeValue::Null(true) => None,
        AttributeValue::M(map) => Some(AttributeValue::M(
            map.into_iter().filter_map(|(k, v)| members_left_out(v).map(|v| (k, v))).collect(),
        )),
        AttributeValue::L(list) => Some(AttributeValue::L(
            list.into_iter()
                .map(|v| members_left_out(v).unwrap_or(AttributeValue::Null(true)))
                .collect(),
        )),
        other => Some(other),
    }
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
struct Sparse {
    a: Option<String>,
    b: Option<Option<u8>>,
    list: Vec<Option<u8>>,
    inner: Option<SparseInner>,
    inners: Vec<SparseInner>,
    by_name: BTreeMap<String, Option<u8>>,
    shape: Shape,
    newtype: OptionNewtype,
    #[serde(default)]
    defaulted: Option<u8>,
    #[serde(rename = "Renamed")]
    renamed: Option<u8>,
    #[serde(flatten)]
    flat: SparseInner,
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
struct SparseInner {
    x: Option<i64>,
    y: Option<Vec<Option<bool>>>,
}

/// A newtype around an `Option`: serde cannot read it back absent, so its `None` is `NULL`.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
struct OptionNewtype(Option<u8>);

fn sparse_strategy() -> impl proptest::strategy::Strategy<Value = Sparse> {
    use proptest::prelude::*;
    let inner = (any::<Option<i64>>(), any::<Option<Vec<Option<bool>>>>())
        .prop_map(|(x, y)| SparseInner { x, y });
    (
        (any::<Option<String>>(), any::<Option<Option<u8>>>(), any::<Vec<Option<u8>>>()),
        (proptest::option::of(inner.clone()), proptest::collection::vec(inner.clone(), 0..3)),
        (
            proptest::collection::btree_map(".{0,3}", any::<Option<u8>>(), 0..3),
            any::<Option<f64>>(),
        ),
        (any::<Option<u8>>(), any::<Option<u8>>(), any::<Option<u8>>(), inner),
    )
        .prop_map(
            |(
                (a, b, list),
                (inner, inners),
                (by_name, shape_b),
                (newtype, defaulted, renamed, flat),
            )| {
                Sparse {
                    a,
                    b,
                    list,
                    inner,
                    inners,
                    by_name,
                    shape: Shape::Struct { a: true, b: shape_b.filter(|f| f.is_finite()) },
                    newtype: OptionNewtype(newtype),
                    defaulted,
                    renamed,
                    flat,
                }
            },
        )
}

proptest::proptest! {
    /// Any shape of `Option`s: by default every member holding `None` (struct fields, map
    /// entries, struct variants' fields, flattened fields, at any depth) is left out and every
    /// other `None` (list elements, a newtype's value) is `NULL`; `Nulls::ALL` is
    /// serde_dynamo's item; both read back as the value, except `Some(None)` and a map
    /// entry holding `None`, which read back as left out (`None`, no entry).
    #[test]
    fn a_none_member_is_left_out(value in sparse_strategy()) {
        let theirs: Item = serde_dynamo::to_item(&value).unwrap();
        let ours = to_fields(&value, Nulls::NONE).unwrap();
        let AttributeValue::M(expected) = members_left_out(AttributeValue::M(theirs.clone())).unwrap()
        else { unreachable!() };
        // The newtype's `NULL` is kept, unlike the members the model leaves out.
        let mut expected = expected;
        if value.newtype.0.is_none() {
            expected.insert("newtype".into(), AttributeValue::Null(true));
        }
        proptest::prop_assert_eq!(&ours, &expected);
        proptest::prop_assert_eq!(to_fields(&value, Nulls::ALL).unwrap(), theirs.clone());

        let mut read_back = value.clone();
        if read_back.b == Some(None) {
            read_back.b = None;
        }
        read_back.by_name.retain(|_, v| v.is_some());
        proptest::prop_assert_eq!(from_fields::<Sparse>(ours).unwrap(), read_back);
        proptest::prop_assert_eq!(from_fields::<Sparse>(theirs).unwrap(), {
            let mut v = value.clone();
            if v.b == Some(None) { v.b = None; }
            v
        });
    }
}

#[test]
fn named_fields_keep_their_nulls() {
    let value = Sparse {
        a: None,
        b: None,
        list: vec![None, Some(1)],
        inner: Some(SparseInner { x: None, y: Some(vec![None]) }),
        inners: vec![],
        by_name: BTreeMap::new(),
        shape: Shape::Unit,
        newtype: OptionNewtype(Some(2)),
        defaulted: None,
        renamed: None,
        flat: SparseInner { x: None, y: None },
    };
    let nulls = Nulls { all: false, fields: &["inner", "Renamed", "x"], absent: None };
    let item = to_fields(&value, nulls).unwrap();
    // Only the members named `absent` leave their own `None` out.
    let only_a = Nulls { all: false, fields: &[], absent: Some(&["a"]) };
    let some = to_fields(&value, only_a).unwrap();
    assert_eq!((some.get("a"), some.get("b")), (None, Some(&AttributeValue::Null(true))));
    let AttributeValue::M(inner) = &some["inner"] else { panic!("{some:?}") };
    assert_eq!(inner.get("x"), None, "a nested member leaves it out");
    let null = AttributeValue::Null(true);
    assert_eq!(item.get("a"), None);
    assert_eq!(item.get("b"), None);
    assert_eq!(item.get("defaulted"), None);
    assert_eq!(item.get("Renamed"), Some(&null));
    // A flattened field is a member of the item: named by its attribute.
    assert_eq!(item.get("x"), Some(&null));
    assert_eq!(item.get("y"), None);
    let AttributeValue::M(inner) = &item["inner"] else { panic!("{item:?}") };
    assert_eq!(inner.get("x"), Some(&null));
    assert_eq!(item["list"], AttributeValue::L(vec![null.clone(), AttributeValue::N("1".into())]));
    assert_eq!(from_fields::<Sparse>(item).unwrap(), value);
}

#[test]
fn a_whole_none_is_none_or_null() {
    assert_eq!(to_value(&None::<u8>).unwrap(), AttributeValue::Null(true));
    assert_eq!(to_value_or_none(&None::<u8>, false).unwrap(), None);
    assert_eq!(to_value_or_none(&None::<u8>, true).unwrap(), Some(AttributeValue::Null(true)));
    assert_eq!(to_value_or_none(&Some(Some(None::<u8>)), false).unwrap(), None);
    assert_eq!(to_value_or_none(&(), false).unwrap(), Some(AttributeValue::Null(true)));
    let inner = SparseInner { x: None, y: None };
    assert_eq!(to_value_or_none(&inner, false).unwrap(), Some(AttributeValue::M(HashMap::new())));
    let AttributeValue::M(kept) = to_value(&inner).map(Some).unwrap().unwrap() else { panic!() };
    assert!(kept.is_empty());
    let Some(AttributeValue::M(kept)) = to_value_or_none(&inner, true).unwrap() else { panic!() };
    assert_eq!(kept.len(), 2);
}
