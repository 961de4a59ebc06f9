//! DynamoDB Streams records read as entities: real records of the streams API (both backends
//! serve it), Lambda events built from items the library wrote, every view type, the
//! library's bookkeeping items, foreign and corrupt items, and arbitrary input.

use std::collections::{BTreeMap, HashMap};

use ddb_model::aws_sdk_dynamodb::primitives::Blob;
use ddb_model::aws_sdk_dynamodb::types::AttributeValue;
use ddb_model::aws_sdk_dynamodbstreams::types::ShardIteratorType;
use ddb_model::prelude::*;
use ddb_model::stream::{
    Change, EventKind, Image, StreamEvent, StreamRecord, UnknownReason, ViewType,
};
use ddb_model::{Collection, Edge, Item, local};
use proptest::prelude::*;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::support::{self, put_raw, s};

#[derive(Table)]
#[table(name = "feed", gsi(name = "gsi1", pk = "gsi1pk", sk = "gsi1sk"))]
struct Feed;

#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = Feed, pk = "USER#<id>", sk = "PROFILE", version = version)]
#[index(gsi1, pk = "EMAIL#<email>", sk = "USER")]
struct User {
    id: String,
    email: String,
    logins: u64,
    version: u64,
}

#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = Feed, pk = "USER#<user>", sk = "ORDER#<seq>")]
struct Order {
    user: String,
    seq: u32,
    total: u64,
}

#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = Feed, pk = "DRIVE#<drive>", sk = "DIR#<id>")]
#[hierarchy(strategy = closure, parent = parent)]
struct Dir {
    drive: String,
    id: String,
    parent: Option<String>,
}

#[derive(Entity, Edge, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = Feed, pk = "USER#<follower>", sk = "FOLLOWS#<followee>")]
#[edge(from = follower, to = followee, inverse(pk = "USER#<followee>", sk = "FOLLOWER#<follower>"))]
struct Follow {
    follower: String,
    followee: String,
}

/// What a consumer of the table's stream reads.
#[derive(Collection, Debug, PartialEq)]
enum Changed {
    User(User),
    Order(Order),
    Dir(Dir),
    Follow(Follow),
}

fn user(id: &str) -> User {
    User { id: id.into(), email: format!("{id}@example.com"), logins: 0, version: 0 }
}

fn dir(id: &str, parent: Option<&str>) -> Dir {
    Dir { drive: "d".into(), id: id.into(), parent: parent.map(Into::into) }
}

/// A short description of one change: its kind, then what each image is.
fn describe(change: &Change<Changed>) -> String {
    let image = |i: &Option<Image<Changed>>| match i {
        None => "-".to_owned(),
        Some(Image::Entity(e)) => match e {
            Changed::User(_) => "User",
            Changed::Order(_) => "Order",
            Changed::Dir(_) => "Dir",
            Changed::Follow(_) => "Follow",
        }
        .to_owned(),
        Some(Image::Unknown(u)) => match &u.reason {
            UnknownReason::Foreign { found } => {
                format!("foreign({})", found.as_deref().unwrap_or(""))
            }
            UnknownReason::Bookkeeping { kind } => format!("bookkeeping({kind})"),
            UnknownReason::Corrupt(_) => "corrupt".to_owned(),
            _ => "other".to_owned(),
        },
    };
    format!("{} {} {}", change.kind.as_str(), image(&change.old), image(&change.new))
}

// ---------------------------------------------------------------------------------------------
// The streams API, on both backends.

/// Every record of the table's stream so far, read shard by shard from the oldest.
async fn read_stream(db: &Db<Feed>) -> Vec<StreamRecord> {
    let streams = local::streams_client_for(&local::endpoint().expect("endpoint"));
    let listed =
        streams.list_streams().table_name(db.table_name()).send().await.expect("list streams");
    let arn = listed.streams()[0].stream_arn().expect("stream arn").to_owned();
    let described = streams.describe_stream().stream_arn(&arn).send().await.expect("describe");
    let shards = described.stream_description().map(|d| d.shards().to_vec()).unwrap_or_default();
    let mut records = Vec::new();
    for shard in shards {
        let mut iterator = streams
            .get_shard_iterator()
            .stream_arn(&arn)
            .shard_id(shard.shard_id().expect("shard id"))
            .shard_iterator_type(ShardIteratorType::TrimHorizon)
            .send()
            .await
            .expect("shard iterator")
            .shard_iterator;
        // An open shard always returns a next iterator: stop at the first empty page.
        while let Some(it) = iterator {
            let page = streams.get_records().shard_iterator(it).send().await.expect("get records");
            if page.records().is_empty() {
                break;
            }
            records.extend(
                page.records().iter().cloned().map(|r| {
                    StreamRecord::try_from(r).expect("a record of the streams API converts")
                }),
            );
            iterator = page.next_shard_iterator;
        }
    }
    records
}

async fn enable_stream(db: &Db<Feed>, view: ViewType) {
    db.sync_table().stream(view).apply().await.expect("enable the stream");
}

#[tokio::test]
async fn records_of_the_streams_api_decode_as_entities() -> Result<(), Error> {
    let db = support::db::<Feed>().await;
    enable_stream(&db, ViewType::NewAndOldImages).await;

    user("ann").create(&db).await?;
    // A returning update writes markers, then removes them: two MODIFY records.
    let ann = User::update(&db, "ann").add(User::LOGINS, 1).await?;
    assert_eq!(ann.logins, 1);
    Order { user: "ann".into(), seq: 1, total: 250 }.put(&db).await?;
    Order::delete(&db, "ann", 1u32).await?;
    Follow::edges(&db).link(&Follow { follower: "ann".into(), followee: "bob".into() }).await?;
    // Another program's item, and a `User` item that another program broke.
    put_raw(
        &db,
        HashMap::from([
            ("pk".into(), s("X#1")),
            ("sk".into(), s("Y")),
            ("_type".into(), s("Invoice")),
        ]),
    )
    .await;
    put_raw(
        &db,
        HashMap::from([
            ("pk".into(), s("USER#zed")),
            ("sk".into(), s("PROFILE")),
            ("_type".into(), s("User")),
        ]),
    )
    .await;

    let records = read_stream(&db).await;
    let changes: Vec<Change<Changed>> =
        records.iter().map(|r| r.decode::<Changed>()).collect::<Result<_, _>>()?;
    let seen: Vec<String> = changes.iter().map(describe).collect();
    println!("{seen:#?}");
    assert_eq!(
        seen,
        [
            "INSERT - User",
            "MODIFY User User",
            "MODIFY User User",
            "INSERT - Order",
            "REMOVE Order -",
            // One transaction: the edge and its inverse item (in either order).
            seen[5].as_str(),
            seen[6].as_str(),
            "INSERT - foreign(Invoice)",
            "INSERT - corrupt",
        ]
    );
    let mut link = [seen[5].as_str(), seen[6].as_str()];
    link.sort();
    assert_eq!(link, ["INSERT - Follow", "INSERT - bookkeeping(Follow~inverse)"]);

    // The marker removal changed nothing a consumer sees; the first update did.
    assert!(!changes[1].is_bookkeeping_only());
    assert!(changes[2].is_bookkeeping_only());
    assert!(
        matches!(changes[1].new_entity(), Some(Changed::User(u)) if u.logins == 1 && u.version == 2)
    );
    assert!(matches!(changes[1].old_entity(), Some(Changed::User(u)) if u.logins == 0));
    // The removed order is read from the old image.
    assert!(matches!(changes[4].entity(), Some(Changed::Order(o)) if o.total == 250));
    assert_eq!(changes[4].entity_type(), Some("Order"));
    let key = Order::key("ann", 1u32);
    assert_eq!(changes[4].key_display(), format!("{:?}", (key.pk(), key.sk().expect("sk"))));
    // The corrupt image still names its type; the foreign one names none of ours.
    assert_eq!(changes[8].entity_type(), Some("User"));
    assert_eq!(changes[7].entity_type(), None);
    for change in &changes {
        assert_eq!(change.view, Some(ViewType::NewAndOldImages));
        assert!(change.sequence_number.is_some() && change.created_at.is_some());
        assert!(!change.removed_by_ttl);
    }
    Ok(())
}

#[tokio::test]
async fn tree_bookkeeping_in_the_stream_is_never_an_entity() -> Result<(), Error> {
    let db = support::db::<Feed>().await;
    enable_stream(&db, ViewType::NewImage).await;
    let tree = Dir::tree(&db, "d");
    tree.insert(&dir("root", None)).await?;
    tree.insert(&dir("a", Some("root"))).await?;
    // A resumable delete: an intent record comes and goes around the deletes.
    tree.delete_subtree("a").transaction_limit(0).await?;

    let records = read_stream(&db).await;
    let changes: Vec<Change<Changed>> =
        records.iter().map(|r| r.decode::<Changed>()).collect::<Result<_, _>>()?;
    let mut entities = BTreeMap::<String, usize>::new();
    let mut bookkeeping = BTreeMap::<String, usize>::new();
    for change in &changes {
        assert_eq!(change.view, Some(ViewType::NewImage));
        assert!(change.old.is_none(), "NEW_IMAGE keeps no old image");
        match (&change.new, change.kind) {
            (Some(Image::Entity(Changed::Dir(d))), _) => {
                *entities.entry(format!("{} {}", change.kind.as_str(), d.id)).or_default() += 1
            }
            (Some(Image::Unknown(u)), _) => match &u.reason {
                UnknownReason::Bookkeeping { kind } => {
                    *bookkeeping.entry(kind.clone()).or_default() += 1
                }
                other => panic!("not bookkeeping: {other:?} in {u:?}"),
            },
            (None, EventKind::Remove) => {}
            (image, kind) => panic!("unexpected {kind:?} {image:?}"),
        }
    }
    assert_eq!(entities.get("INSERT root"), Some(&1));
    assert_eq!(entities.get("INSERT a"), Some(&1));
    assert!(bookkeeping.contains_key("Dir:copy"), "{bookkeeping:?}");
    assert!(bookkeeping.contains_key("Dir:tree-op"), "the intent record: {bookkeeping:?}");
    let removed: Vec<&str> = changes
        .iter()
        .filter(|c| c.kind == EventKind::Remove)
        .filter_map(|c| c.keys.get("sk").and_then(|v| v.as_s().ok()).map(String::as_str))
        .collect();
    assert!(removed.contains(&"DIR#a"), "{removed:?}");
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Lambda events built from items the library wrote.

/// An item in DynamoDB JSON, written independently of the library's serializer.
fn ddb_json(item: &Item) -> Value {
    fn value(v: &AttributeValue) -> Value {
        use std::fmt::Write;
        let b64 = |b: &Blob| {
            // Standard base64 with padding.
            const A: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
            let mut out = String::new();
            for chunk in b.as_ref().chunks(3) {
                let n = chunk
                    .iter()
                    .enumerate()
                    .fold(0u32, |n, (i, b)| n | (*b as u32) << (16 - 8 * i));
                for i in 0..4 {
                    if i <= chunk.len() {
                        out.write_char(A[(n >> (18 - 6 * i) & 63) as usize] as char).ok();
                    } else {
                        out.push('=');
                    }
                }
            }
            out
        };
        match v {
            AttributeValue::S(s) => json!({ "S": s }),
            AttributeValue::N(n) => json!({ "N": n }),
            AttributeValue::B(b) => json!({ "B": b64(b) }),
            AttributeValue::Bool(b) => json!({ "BOOL": b }),
            AttributeValue::Null(b) => json!({ "NULL": b }),
            AttributeValue::Ss(v) => json!({ "SS": v }),
            AttributeValue::Ns(v) => json!({ "NS": v }),
            AttributeValue::Bs(v) => json!({ "BS": v.iter().map(b64).collect::<Vec<_>>() }),
            AttributeValue::L(v) => json!({ "L": v.iter().map(value).collect::<Vec<_>>() }),
            AttributeValue::M(m) => json!({ "M": ddb_json(m) }),
            other => panic!("unexpected value {other:?}"),
        }
    }
    Value::Object(item.iter().map(|(k, v)| (k.clone(), value(v))).collect())
}

fn keys_of(item: &Item) -> Item {
    item.iter()
        .filter(|(k, _)| *k == "pk" || *k == "sk")
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// A Lambda record of `kind` for the item `old` -> `new` as a stream of `view` shows it.
pub(crate) fn lambda_record(
    kind: &str,
    view: &str,
    old: Option<&Item>,
    new: Option<&Item>,
) -> Value {
    let keys = keys_of(old.or(new).expect("an item"));
    let mut change = json!({
        "ApproximateCreationDateTime": 1.7e9,
        "Keys": ddb_json(&keys),
        "SequenceNumber": "4200000000000000001",
        "SizeBytes": 120,
        "StreamViewType": view,
    });
    if matches!(view, "NEW_IMAGE" | "NEW_AND_OLD_IMAGES")
        && let Some(new) = new
    {
        change["NewImage"] = ddb_json(new);
    }
    if matches!(view, "OLD_IMAGE" | "NEW_AND_OLD_IMAGES")
        && let Some(old) = old
    {
        change["OldImage"] = ddb_json(old);
    }
    json!({
        "eventID": "c4ca4238a0b923820dcc509a6f75849b",
        "eventName": kind,
        "eventVersion": "1.1",
        "eventSource": "aws:dynamodb",
        "awsRegion": "us-east-1",
        "dynamodb": change,
        "eventSourceARN": "arn:aws:dynamodb:us-east-1:123456789012:table/feed/stream/2026-11-27T00:00:00.000",
    })
}

#[tokio::test]
async fn lambda_events_of_real_items_in_every_view_type() -> Result<(), Error> {
    let db = support::db::<Feed>().await;
    let mut ann = user("ann");
    ann.create(&db).await?;
    let before = support::raw(&db, "USER#ann", "PROFILE").await.expect("ann");
    ann.logins = 7;
    ann.replace(&db).await?;
    let after = support::raw(&db, "USER#ann", "PROFILE").await.expect("ann");
    Order { user: "ann".into(), seq: 3, total: 99 }.put(&db).await?;
    let key = Order::key("ann", 3u32);
    let order = support::raw(&db, key.pk(), key.sk().expect("sk")).await.expect("order");

    for view in ["KEYS_ONLY", "NEW_IMAGE", "OLD_IMAGE", "NEW_AND_OLD_IMAGES"] {
        let event = json!({ "Records": [
            lambda_record("INSERT", view, None, Some(&before)),
            lambda_record("MODIFY", view, Some(&before), Some(&after)),
            lambda_record("REMOVE", view, Some(&order), None),
        ]});
        let event: StreamEvent = serde_json::from_value(event).expect("a Lambda event");
        let changes: Vec<Change<Changed>> = event.decode().into_iter().collect::<Result<_, _>>()?;
        let (new, old) = (view.contains("NEW"), view.contains("OLD"));
        let logins = |i: Option<&Changed>| match i {
            Some(Changed::User(u)) => Some(u.logins),
            _ => None,
        };
        assert_eq!(changes[0].kind, EventKind::Insert);
        assert_eq!(logins(changes[0].new_entity()), new.then_some(0), "{view}");
        assert!(changes[0].old.is_none());
        assert_eq!(changes[1].kind, EventKind::Modify);
        assert_eq!(logins(changes[1].new_entity()), new.then_some(7), "{view}");
        assert_eq!(logins(changes[1].old_entity()), old.then_some(0), "{view}");
        assert_eq!(changes[2].kind, EventKind::Remove);
        assert!(changes[2].new.is_none());
        assert_eq!(changes[2].old_entity().is_some(), old, "{view}");
        // Without images the entity type comes from the keys.
        assert_eq!(changes[0].entity_type(), Some("User"), "{view}");
        assert_eq!(changes[2].entity_type(), Some("Order"), "{view}");
        assert_eq!(changes[1].view, ViewType::parse(view));
        assert_eq!(changes[1].sequence_number.as_deref(), Some("4200000000000000001"));
        assert!(changes[1].source_arn.as_deref().is_some_and(|a| a.contains("/stream/")));
        assert!(changes[1].created_at.is_some());
    }

    // A deletion by TTL says so.
    let mut ttl = lambda_record("REMOVE", "OLD_IMAGE", Some(&order), None);
    ttl["userIdentity"] = json!({ "type": "Service", "principalId": "dynamodb.amazonaws.com" });
    let record: StreamRecord = serde_json::from_value(ttl).expect("a record");
    assert!(record.decode::<Changed>()?.removed_by_ttl);
    Ok(())
}

#[test]
fn crafted_records() {
    let user: Item = HashMap::from([
        ("pk".into(), s("USER#ann")),
        ("sk".into(), s("PROFILE")),
        ("_type".into(), s("User")),
        ("id".into(), s("ann")),
        ("email".into(), s("a@x")),
        ("logins".into(), AttributeValue::N("1".into())),
        ("version".into(), AttributeValue::N("1".into())),
    ]);
    let decode = |value: Value| -> Result<Change<Changed>, Error> {
        serde_json::from_value::<StreamRecord>(value).expect("a record").decode::<Changed>()
    };
    let reason = |change: &Change<Changed>| match change.new.as_ref().and_then(Image::unknown) {
        Some(u) => match &u.reason {
            UnknownReason::Foreign { found } => format!("foreign {found:?}"),
            UnknownReason::Bookkeeping { kind } => format!("bookkeeping {kind}"),
            UnknownReason::Corrupt(e) => format!("corrupt {e}"),
            _ => "other".into(),
        },
        None => "entity".into(),
    };
    let with = |f: &dyn Fn(&mut Item)| {
        let mut item = user.clone();
        f(&mut item);
        decode(lambda_record("INSERT", "NEW_IMAGE", None, Some(&item))).expect("decodes")
    };
    assert_eq!(reason(&with(&|_| {})), "entity");
    assert_eq!(
        reason(&with(&|i| {
            i.insert("_type".into(), s("Ghost"));
        })),
        r#"foreign Some("Ghost")"#
    );
    assert_eq!(
        reason(&with(&|i| {
            i.remove("_type");
        })),
        "foreign None"
    );
    assert_eq!(
        reason(&with(&|i| {
            i.insert("_type".into(), s("User:tree-op"));
        })),
        "bookkeeping User:tree-op"
    );
    assert_eq!(
        reason(&with(&|i| {
            i.insert("_type".into(), s("Follow~inverse"));
        })),
        "bookkeeping Follow~inverse"
    );
    assert!(
        reason(&with(&|i| {
            i.insert("logins".into(), s("many"));
        }))
        .starts_with("corrupt")
    );
    // Keys that disagree with the fields.
    assert!(
        reason(&with(&|i| {
            i.insert("id".into(), s("bob"));
        }))
        .starts_with("corrupt")
    );
    assert!(
        reason(&with(&|i| {
            i.remove("email");
        }))
        .starts_with("corrupt")
    );
    // Markers of a returning update are never fields.
    let marked = with(&|i| {
        i.insert("_ddbm.1.x".into(), AttributeValue::N("3".into()));
    });
    assert_eq!(reason(&marked), "entity");

    // Records no stream writes are typed errors.
    let mut bad = lambda_record("UPSERT", "NEW_IMAGE", None, Some(&user));
    assert!(decode(bad.clone()).is_err_and(|e| e.is_invalid_stream_record()));
    let reason = |e: Error| match e {
        Error::InvalidStreamRecord { reason, .. } => Some(reason),
        _ => None,
    };
    let name = "UPSERT".to_owned();
    let unknown_event = StreamRecordReason::UnknownEventName { name };
    assert_eq!(decode(bad.clone()).err().and_then(reason), Some(unknown_event));
    bad["eventName"] = json!("INSERT");
    bad["dynamodb"]["StreamViewType"] = json!("EVERYTHING");
    let err = decode(bad).expect_err("an unknown view type");
    assert!(err.is_invalid_stream_record());
    assert!(err.to_string().contains("EVERYTHING"), "{err}");
    let name = "EVERYTHING".to_owned();
    assert_eq!(reason(err), Some(StreamRecordReason::UnknownViewType { name }));
    // Malformed DynamoDB JSON is a deserialization error, never a panic.
    for bad in [
        json!({ "eventName": "INSERT", "dynamodb": { "Keys": { "pk": { "S": 1 } } } }),
        json!({ "eventName": "INSERT", "dynamodb": { "NewImage": { "pk": { "Q": "x" } } } }),
        json!({ "eventName": "INSERT", "dynamodb": { "NewImage": [] } }),
        json!({ "eventName": 5 }),
    ] {
        assert!(serde_json::from_value::<StreamRecord>(bad).is_err());
    }
}

// ---------------------------------------------------------------------------------------------
// Arbitrary input never panics.

fn any_value() -> impl Strategy<Value = AttributeValue> {
    let text = "\\PC{0,12}";
    let leaf = prop_oneof![
        text.prop_map(AttributeValue::S),
        "-?[0-9]{1,5}(\\.[0-9]{1,3})?".prop_map(AttributeValue::N),
        any::<String>().prop_map(AttributeValue::N),
        proptest::collection::vec(any::<u8>(), 0..8).prop_map(|b| AttributeValue::B(Blob::new(b))),
        any::<bool>().prop_map(AttributeValue::Bool),
        Just(AttributeValue::Null(true)),
        proptest::collection::vec(text, 1..3).prop_map(AttributeValue::Ss),
        proptest::collection::vec(
            proptest::collection::vec(any::<u8>(), 0..4).prop_map(Blob::new),
            1..3
        )
        .prop_map(AttributeValue::Bs),
    ];
    leaf.prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(AttributeValue::L),
            proptest::collection::hash_map("\\PC{0,6}", inner, 0..4).prop_map(AttributeValue::M),
        ]
    })
}

/// Items near the model's: its attribute names, its types or not, arbitrary values.
fn any_item() -> impl Strategy<Value = Item> {
    let names = prop_oneof![
        Just("pk".to_owned()),
        Just("sk".to_owned()),
        Just("_type".to_owned()),
        Just("id".to_owned()),
        Just("email".to_owned()),
        Just("logins".to_owned()),
        Just("version".to_owned()),
        Just("user".to_owned()),
        Just("seq".to_owned()),
        Just("total".to_owned()),
        Just("_ddbm.1.a".to_owned()),
        "\\PC{0,8}",
    ];
    let typed = prop_oneof![
        Just("User"),
        Just("Order"),
        Just("Dir"),
        Just("Follow"),
        Just("Dir:copy"),
        Just("Follow~inverse"),
        Just("")
    ]
    .prop_map(|t| AttributeValue::S(t.to_owned()));
    let keys = prop_oneof![
        Just(("USER#ann", "PROFILE")),
        Just(("USER#ann", "ORDER#1")),
        Just(("USER#", "ORDER#x")),
        Just(("", ""))
    ];
    (proptest::collection::hash_map(names, any_value(), 0..8), typed, keys, any::<u8>()).prop_map(
        |(mut item, typed, (pk, sk), mode)| {
            if mode % 4 != 0 {
                item.insert("_type".into(), typed);
                item.insert("pk".into(), s(pk));
                item.insert("sk".into(), s(sk));
            }
            item
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn prop_items_round_trip_through_lambda_json(item in any_item(), keys in any_item()) {
        let record = StreamRecord {
            event_name: "MODIFY".into(),
            dynamodb: ddb_model::stream::StreamChange {
                keys, new_image: Some(item.clone()), old_image: Some(item), ..Default::default()
            },
            ..Default::default()
        };
        let text = serde_json::to_string(&record).expect("serializes");
        let back: StreamRecord = serde_json::from_str(&text).expect("reads back");
        prop_assert_eq!(&back, &record);
        // Also as an independent writer writes it.
        let independent = serde_json::json!({
            "eventName": "MODIFY",
            "dynamodb": {
                "Keys": ddb_json(&record.dynamodb.keys),
                "NewImage": ddb_json(record.dynamodb.new_image.as_ref().expect("new")),
            },
        });
        let read: StreamRecord = serde_json::from_value(independent).expect("reads");
        prop_assert_eq!(&read.dynamodb.new_image, &record.dynamodb.new_image);
        prop_assert_eq!(&read.dynamodb.keys, &record.dynamodb.keys);
    }

    #[test]
    fn prop_arbitrary_images_never_panic(
        old in proptest::option::of(any_item()),
        new in proptest::option::of(any_item()),
        kind in prop_oneof![
            Just("INSERT".to_owned()), Just("MODIFY".to_owned()), Just("REMOVE".to_owned()), "\\PC{0,6}"
        ],
    ) {
        let record = StreamRecord {
            event_name: kind.clone(),
            dynamodb: ddb_model::stream::StreamChange {
                keys: new.as_ref().or(old.as_ref()).map(keys_of).unwrap_or_default(),
                new_image: new.clone(),
                old_image: old,
                ..Default::default()
            },
            ..Default::default()
        };
        match record.decode::<Changed>() {
            Ok(change) => {
                prop_assert_eq!(EventKind::parse(&kind), Some(change.kind));
                // An entity image is one whose type the collection lists.
                if let Some(Image::Entity(_)) = &change.new {
                    let ty = new.as_ref().and_then(|n| n.get("_type")).and_then(|t| t.as_s().ok());
                    prop_assert!(ty.is_some_and(|t| Changed::TYPES.contains(&t.as_str())));
                }
                let _ = (change.entity_type(), change.key_display(), change.is_bookkeeping_only());
            }
            Err(e) => prop_assert!(e.is_invalid_stream_record() && EventKind::parse(&kind).is_none()),
        }
    }

    #[test]
    fn prop_arbitrary_json_never_panics(text in "\\PC{0,80}", value in any_json()) {
        let _ = serde_json::from_str::<StreamEvent>(&text).map(|e| e.decode::<Changed>());
        if let Ok(event) = serde_json::from_value::<StreamEvent>(json!({ "Records": [value.clone()] })) {
            let _ = event.decode::<Changed>();
        }
        if let Ok(record) = serde_json::from_value::<StreamRecord>(
            json!({ "eventName": "INSERT", "dynamodb": { "Keys": value.clone(), "NewImage": value } })
        ) {
            let _ = record.decode::<Changed>();
        }
    }
}

/// Arbitrary JSON, with DynamoDB JSON's type names among the keys.
fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        "\\PC{0,8}".prop_map(Value::String),
    ];
    let key = prop_oneof![
        Just("S"),
        Just("N"),
        Just("B"),
        Just("BOOL"),
        Just("NULL"),
        Just("SS"),
        Just("NS"),
        Just("BS"),
        Just("L"),
        Just("M"),
        Just("pk"),
        Just("eventName"),
        Just("dynamodb"),
        Just("NewImage"),
    ]
    .prop_map(str::to_owned);
    leaf.prop_recursive(4, 32, 4, move |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            proptest::collection::vec((key.clone(), inner), 0..4)
                .prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}
