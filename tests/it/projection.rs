//! Typed projections in item collections: a customer without their addresses and their
//! orders with a few attributes, in one `Query` with a `ProjectionExpression`.

use std::collections::BTreeMap;

use ddb_model::prelude::*;
use ddb_model::{DefaultTable, Item, Op};
use serde::{Deserialize, Serialize};

use crate::support::{self, n, put_raw, s};

#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(pk = "CUSTOMER#<id>", sk = "CUSTOMER")]
struct Customer {
    id: String,
    name: String,
    #[serde(rename = "mail", skip_serializing_if = "Option::is_none", default)]
    email: Option<String>,
    addresses: BTreeMap<String, String>,
}

#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(pk = "CUSTOMER#<customer>", sk = "ORDER#<seq>")]
struct Order {
    customer: String,
    seq: u32,
    total: u64,
    lines: Vec<String>,
}

/// Not listed by the collections below: its items are the "other" ones.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(pk = "CUSTOMER#<customer>", sk = "ADDRESS#<label>")]
struct Address {
    customer: String,
    label: String,
    street: String,
}

/// Tagged in an attribute of its own: the projection must read it to tell the item apart.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(pk = "CUSTOMER#<customer>", sk = "NOTE#<n>", type_attr = "kind", name = "note")]
struct Note {
    customer: String,
    n: u32,
    text: String,
    body: String,
}

#[derive(Projection, Debug, Clone, PartialEq)]
#[projection(entity = Customer)]
struct CustomerCard {
    name: String,
    email: Option<String>,
}

#[derive(Projection, Debug, Clone, PartialEq)]
#[projection(entity = Order)]
struct OrderTotal {
    seq: u32,
    total: u64,
}

#[derive(Projection, Debug, Clone, PartialEq)]
#[projection(entity = Note)]
struct NoteTitle {
    text: String,
}

#[derive(Collection, Debug, Clone, PartialEq)]
enum Summary {
    Customer(CustomerCard),
    Order(OrderTotal),
    Note(NoteTitle),
}

#[derive(Collection, Debug, Clone, PartialEq)]
enum SummaryOrOther {
    Customer(CustomerCard),
    Order(OrderTotal),
    #[collection(other)]
    Other(Item),
}

/// A whole customer with projected orders: every item is read whole.
#[derive(Collection, Debug, Clone, PartialEq)]
enum CustomerWithTotals {
    Customer(Customer),
    Order(OrderTotal),
    #[collection(other)]
    Other(Item),
}

fn customer(id: &str) -> Customer {
    let addresses = (0..20).map(|i| (format!("a{i}"), "x".repeat(1000))).collect();
    Customer { id: id.into(), name: format!("name {id}"), email: None, addresses }
}

fn order(customer: &str, seq: u32) -> Order {
    Order {
        customer: customer.into(),
        seq,
        total: u64::from(seq) * 10,
        lines: vec!["y".repeat(500); 4],
    }
}

async fn populated() -> Db<DefaultTable> {
    let db = support::db::<DefaultTable>().await;
    for id in ["c1", "c2"] {
        let mut c = customer(id);
        if id == "c2" {
            c.email = Some("c2@example.com".into());
        }
        let orders: Vec<Order> = (0..7).map(|seq| order(id, seq)).collect();
        let addresses: Vec<Address> = (0..3)
            .map(|i| Address {
                customer: id.into(),
                label: format!("l{i}"),
                street: "z".repeat(900),
            })
            .collect();
        let notes: Vec<Note> = (0..2)
            .map(|n| Note {
                customer: id.into(),
                n,
                text: format!("note {n}"),
                body: "b".repeat(800),
            })
            .collect();
        db.batch_put(&orders).put_all(&addresses).put_all(&notes).put(&c).await.expect("populate");
    }
    db.reset_requests();
    db
}

fn expected(id: &str) -> Vec<Summary> {
    // Sort-key order: ADDRESS#.. (left out), CUSTOMER, NOTE#.., ORDER#..
    let email = (id == "c2").then(|| "c2@example.com".to_owned());
    let mut out = vec![Summary::Customer(CustomerCard { name: format!("name {id}"), email })];
    out.extend((0..2).map(|n| Summary::Note(NoteTitle { text: format!("note {n}") })));
    out.extend((0..7).map(|seq| Summary::Order(OrderTotal { seq, total: u64::from(seq) * 10 })));
    out
}

#[tokio::test]
async fn a_projecting_collection_reads_only_its_fields_in_one_query() -> Result<(), Error> {
    let db = populated().await;
    for id in ["c1", "c2"] {
        let before = db.requests();
        let read = Customer::partition(&db, id).collection_only::<Summary>().all().await?;
        assert_eq!((db.requests() - before).get(Op::Query), 1, "one query");
        assert_eq!(read, expected(id));
    }
    assert_eq!(<CustomerCard as Projection>::ATTRS, ["name", "mail"]);
    Ok(())
}

#[tokio::test]
async fn left_out_attributes_are_not_returned() -> Result<(), Error> {
    let db = populated().await;
    // The catch-all variant shows what the service returned for an unlisted item: its keys
    // and type attribute, and none of its own attributes (not in the projection).
    let read = Customer::partition(&db, "c1").collection::<SummaryOrOther>().all().await?;
    let others: Vec<&Item> = read
        .iter()
        .filter_map(|v| if let SummaryOrOther::Other(item) = v { Some(item) } else { None })
        .collect();
    assert_eq!(others.len(), 5, "3 addresses and 2 notes");
    for item in others {
        let mut attrs: Vec<&str> = item.keys().map(String::as_str).collect();
        attrs.sort_unstable();
        // A note is tagged in `kind`, which no variant of this collection reads.
        let note = item["sk"].as_s().is_ok_and(|sk| sk.starts_with("NOTE#"));
        let expected: &[&str] = if note { &["pk", "sk"] } else { &["_type", "pk", "sk"] };
        assert_eq!(attrs, expected, "{item:?}");
    }
    // A raw query with the same projection returns as little; the whole items are large.
    let raw = db
        .client()
        .query()
        .table_name(db.table_name())
        .key_condition_expression("pk = :pk")
        .expression_attribute_values(":pk", s("CUSTOMER#c1"))
        .send()
        .await
        .expect("raw query");
    let whole: usize = raw.items().iter().map(ddb_model::item::item_size).sum();
    assert!(whole > 30_000, "{whole}");

    // A collection with a whole entity variant reads whole items.
    let read = Customer::partition(&db, "c1").collection::<CustomerWithTotals>().all().await?;
    assert!(read.contains(&CustomerWithTotals::Customer(customer("c1"))));
    let address = read.iter().find_map(|v| match v {
        CustomerWithTotals::Other(item) if item["_type"].as_s().is_ok_and(|t| t == "Address") => {
            Some(item)
        }
        _ => None,
    });
    assert!(address.is_some_and(|a| a.contains_key("street")));
    Ok(())
}

#[tokio::test]
async fn pages_limits_and_order_across_projected_variants() -> Result<(), Error> {
    let db = populated().await;
    let query = || Customer::partition(&db, "c2").collection_only::<Summary>();
    let all = expected("c2");
    assert_eq!(query().count().await?, 10);
    assert_eq!(query().limit(4).all().await?, all[..4]);
    let newest: Vec<Summary> = all.iter().rev().take(3).cloned().collect();
    assert_eq!(query().reverse().limit(3).all().await?, newest);

    // Pages of three, with cursors, whatever the page size of the requests.
    for page_size in [None, Some(1), Some(2)] {
        let mut seen = Vec::new();
        let mut cursor: Option<Cursor> = None;
        let mut pages = 0;
        loop {
            let mut q = query().limit(3);
            if let Some(size) = page_size {
                q = q.page_size(size);
            }
            let page = q.page(cursor.as_ref()).await?;
            pages += 1;
            assert!(page.items.len() <= 3);
            seen.extend(page.items);
            match page.next {
                Some(next) => cursor = Some(next),
                None => break,
            }
        }
        assert_eq!(seen, all, "page size {page_size:?}");
        assert!(pages >= 4, "{pages}");
    }
    // A cursor of the projecting collection does not continue a query of the whole items.
    let page = query().limit(2).page(None).await?;
    let next = page.next.expect("more");
    let err = Customer::partition(&db, "c2")
        .collection_only::<CustomerWithTotals>()
        .page(Some(&next))
        .await;
    assert!(err.is_err(), "{err:?}");
    Ok(())
}

#[tokio::test]
async fn between_entities_with_a_projection() -> Result<(), Error> {
    let db = populated().await;
    db.reset_requests();
    // The customer and its orders, projected; the addresses sort before, outside the range.
    let read = Customer::partition(&db, "c1")
        .collection::<SummaryOrOther>()
        .between_entities::<Customer, Order>()
        .all()
        .await?;
    assert_eq!(db.requests().get(Op::Query), 1);
    let mut expected =
        vec![SummaryOrOther::Customer(CustomerCard { name: "name c1".into(), email: None })];
    // The notes sort between the customer and the orders: unlisted, they are "other".
    let notes = read.iter().filter(|v| matches!(v, SummaryOrOther::Other(_))).count();
    assert_eq!(notes, 2);
    expected.extend(
        (0..7).map(|seq| SummaryOrOther::Order(OrderTotal { seq, total: u64::from(seq) * 10 })),
    );
    let listed: Vec<SummaryOrOther> =
        read.into_iter().filter(|v| !matches!(v, SummaryOrOther::Other(_))).collect();
    assert_eq!(listed, expected);

    // The two newest orders and nothing else.
    let newest = Customer::partition(&db, "c1")
        .collection::<Summary>()
        .between_entities::<Order, Order>()
        .reverse()
        .limit(2)
        .all()
        .await?;
    assert_eq!(
        newest,
        [
            Summary::Order(OrderTotal { seq: 6, total: 60 }),
            Summary::Order(OrderTotal { seq: 5, total: 50 })
        ]
    );
    Ok(())
}

#[tokio::test]
async fn foreign_and_corrupt_items_are_errors_never_wrong_data() -> Result<(), Error> {
    let db = populated().await;
    let plant =
        |sk: &str,
         kind: &str,
         extra: &[(&str, ddb_model::aws_sdk_dynamodb::types::AttributeValue)]| {
            let mut item = Item::new();
            item.insert("pk".into(), s("CUSTOMER#c3"));
            item.insert("sk".into(), s(sk));
            item.insert("_type".into(), s(kind));
            for (k, v) in extra {
                item.insert((*k).into(), v.clone());
            }
            item
        };
    let query = || Customer::partition(&db, "c3");

    // An unknown type: an error for a collection without a catch-all, skipped by
    // collection_only.
    put_raw(&db, plant("GHOST#1", "Ghost", &[("secret", s("s"))])).await;
    let err = query().collection::<Summary>().all().await;
    assert!(matches!(err, Err(Error::UnknownEntityType { .. })), "{err:?}");
    assert_eq!(query().collection_only::<Summary>().all().await?, []);

    // An order whose key its fields could not have written.
    put_raw(&db, plant("ORDER#x", "Order", &[("seq", n(1)), ("total", n(2))])).await;
    let err = query().collection_only::<Summary>().all().await;
    assert!(matches!(err, Err(Error::CorruptItem { entity: "Order", .. })), "{err:?}");
    support::delete_raw(&db, "CUSTOMER#c3", "ORDER#x").await;

    // An order whose total is text, and one without its total: never a default.
    let key = Order::key("c3", 1u32);
    let sk = key.sk().expect("sort key");
    put_raw(&db, plant(sk, "Order", &[("seq", n(1)), ("total", s("ten"))])).await;
    let err = query().collection_only::<Summary>().all().await;
    assert!(matches!(err, Err(Error::Deserialize { entity: "Order", .. })), "{err:?}");
    put_raw(&db, plant(sk, "Order", &[("seq", n(1))])).await;
    let err = query().collection_only::<Summary>().all().await;
    match err {
        Err(e @ Error::Deserialize { entity: "Order", .. }) => {
            assert!(e.to_string().contains("total") || format!("{e:?}").contains("total"), "{e:?}")
        }
        other => panic!("{other:?}"),
    }
    // An `Option` field reads an absent attribute as `None`.
    put_raw(&db, plant("CUSTOMER", "Customer", &[("name", s("Ann"))])).await;
    support::delete_raw(&db, "CUSTOMER#c3", sk).await;
    let read = query().collection_only::<Summary>().all().await?;
    assert_eq!(read, [Summary::Customer(CustomerCard { name: "Ann".into(), email: None })]);
    Ok(())
}

#[tokio::test]
async fn edge_values_read_back_through_a_projection() -> Result<(), Error> {
    let db = support::db::<DefaultTable>().await;
    let names = ["", "#", "a%23b", "日本語\u{10FFFF}", "name with spaces and \"quotes\"", "\0"];
    let emails = [None, Some(String::new()), Some("ü@例え.jp".to_owned())];
    let mut expected = Vec::new();
    for (i, name) in names.iter().enumerate() {
        let id = format!("edge#{i}");
        let email = emails[i % emails.len()].clone();
        let mut c = customer(&id);
        c.name = (*name).to_owned();
        c.email = email.clone();
        c.put(&db).await?;
        let o = Order { customer: id.clone(), seq: u32::MAX, total: u64::MAX, lines: vec![] };
        o.put(&db).await?;
        expected.push((
            id,
            vec![
                Summary::Customer(CustomerCard { name: (*name).to_owned(), email }),
                Summary::Order(OrderTotal { seq: u32::MAX, total: u64::MAX }),
            ],
        ));
    }
    for (id, items) in expected {
        let read = Customer::partition(&db, &id).collection_only::<Summary>().all().await?;
        assert_eq!(read, items, "{id}");
    }
    Ok(())
}
