//! Multi-attribute GSI keys: an index keyed by up to four typed attributes for its partition
//! key and four for its sort key, which are the entity's own fields.
//!
//! Both backends (dynoxide 3.2 and DynamoDB Local 3.3) accept such indexes and apply the
//! service's rules (`raw_backends_accept_multi_attribute_indexes`): every partition attribute
//! needs an equality, a condition on a sort attribute needs equalities on every one before
//! it, numbers sort as numbers. Nothing is skipped on either backend.

use std::collections::{BTreeMap, HashMap};

use ddb_model::aws_sdk_dynamodb::types::{
    AttributeDefinition, AttributeValue, BillingMode, GlobalSecondaryIndex, KeySchemaElement,
    KeyType, Projection, ProjectionType, ScalarAttributeType,
};
use ddb_model::chrono::NaiveDate;
use ddb_model::prelude::*;
use ddb_model::{Op, error::KeyProblem};
use futures_util::TryStreamExt;
use proptest::prelude::*;
use serde::{Deserialize, Serialize};

use crate::support::{self, n, s};

#[derive(Table)]
#[table(
    name = "multi",
    gsi(name = "by_status", pk = ["tenant", "status"], sk = ["priority": N, "created"]),
    gsi(name = "by_assignee", pk = ["tenant", "assignee"], sk = ["due"]),
    gsi(name = "by_region", pk = ["region": N])
)]
struct Shop;

/// An order: listed by tenant and status, by priority then creation; by assignee (orders
/// that have one), by due date; by region number.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = Shop, pk = "ORDER#<id>", sk = "ORDER")]
#[index(by_status, pk = [tenant, status], sk = [priority, created_on])]
#[index(by_assignee, pk = [tenant, assignee], sk = [due])]
#[index(by_region, pk = [region])]
struct Order {
    id: String,
    tenant: String,
    status: String,
    priority: i64,
    #[serde(rename = "created")]
    created_on: String,
    assignee: Option<String>,
    due: NaiveDate,
    region: u16,
    note: String,
}

#[derive(Deserialize, Debug, PartialEq)]
struct Note {
    note: String,
}

fn order(id: &str, status: &str, priority: i64, created: &str) -> Order {
    Order {
        id: id.into(),
        tenant: "acme".into(),
        status: status.into(),
        priority,
        created_on: created.into(),
        assignee: None,
        due: NaiveDate::from_ymd_opt(2026, 1, 1).expect("date"),
        region: 1,
        note: String::new(),
    }
}

fn ids(orders: &[Order]) -> Vec<&str> {
    orders.iter().map(|o| o.id.as_str()).collect()
}

fn element(name: &str, t: KeyType) -> KeySchemaElement {
    KeySchemaElement::builder().attribute_name(name).key_type(t).build().expect("element")
}

fn def(name: &str, t: ScalarAttributeType) -> AttributeDefinition {
    AttributeDefinition::builder().attribute_name(name).attribute_type(t).build().expect("def")
}

/// What each backend accepts, with raw SDK calls: a table with a GSI of two HASH and two
/// RANGE elements (S, S / N, S), numbers ordered as numbers, and the query rules.
#[tokio::test]
async fn raw_backends_accept_multi_attribute_indexes() {
    let db = support::db::<Shop>().await;
    let name = format!("{}-raw", db.table_name());
    let c = db.client();
    let gsi = GlobalSecondaryIndex::builder()
        .index_name("by_status")
        .key_schema(element("tenant", KeyType::Hash))
        .key_schema(element("status", KeyType::Hash))
        .key_schema(element("priority", KeyType::Range))
        .key_schema(element("created", KeyType::Range))
        .projection(Projection::builder().projection_type(ProjectionType::All).build())
        .build()
        .expect("gsi");
    c.create_table()
        .table_name(&name)
        .billing_mode(BillingMode::PayPerRequest)
        .key_schema(element("pk", KeyType::Hash))
        .attribute_definitions(def("pk", ScalarAttributeType::S))
        .attribute_definitions(def("tenant", ScalarAttributeType::S))
        .attribute_definitions(def("status", ScalarAttributeType::S))
        .attribute_definitions(def("priority", ScalarAttributeType::N))
        .attribute_definitions(def("created", ScalarAttributeType::S))
        .global_secondary_indexes(gsi)
        .send()
        .await
        .expect("both backends create a multi-attribute index");
    for (i, p) in [9, 10, 100, -1].iter().enumerate() {
        let mut item = HashMap::new();
        item.insert("pk".into(), s(&format!("i{i}")));
        item.insert("tenant".into(), s("t"));
        item.insert("status".into(), s("open"));
        item.insert("priority".into(), n(p));
        item.insert("created".into(), s(&format!("2025-0{i}")));
        c.put_item().table_name(&name).set_item(Some(item)).send().await.expect("put");
    }
    let query = |kc: &str, vals: Vec<(&str, AttributeValue)>| {
        let mut r =
            c.query().table_name(&name).index_name("by_status").key_condition_expression(kc);
        for (placeholder, attr) in
            [("#t", "tenant"), ("#s", "status"), ("#p", "priority"), ("#c", "created")]
        {
            if kc.contains(placeholder) {
                r = r.expression_attribute_names(placeholder, attr);
            }
        }
        for (k, v) in vals {
            r = r.expression_attribute_values(k, v);
        }
        r.send()
    };
    let priorities = |out: ddb_model::aws_sdk_dynamodb::operation::query::QueryOutput| {
        out.items().iter().filter_map(|i| i.get("priority").cloned()).collect::<Vec<_>>()
    };
    let base = || vec![(":t", s("t")), (":s", s("open"))];
    let all = query("#t = :t AND #s = :s", base()).await.expect("partition");
    assert_eq!(priorities(all), [n(-1), n(9), n(10), n(100)], "numbers sort as numbers");
    let mut v = base();
    v.push((":p", n(9)));
    let above = query("#p > :p AND #s = :s AND #t = :t", v).await.expect("any order of terms");
    assert_eq!(priorities(above), [n(10), n(100)]);
    // A range on the second sort attribute without equality on the first: refused by both.
    let mut v = base();
    v.push((":c", s("2025")));
    assert!(query("#t = :t AND #s = :s AND #c > :c", v).await.is_err());
    // Equality on one partition attribute only: refused by both.
    assert!(query("#t = :t", vec![(":t", s("t"))]).await.is_err());
    c.delete_table().table_name(&name).send().await.expect("deleted");
}

#[tokio::test]
async fn create_table_emits_the_typed_key_schema() -> Result<(), Error> {
    let db = support::db::<Shop>().await;
    let table = db.client().describe_table().table_name(db.table_name()).send().await;
    let table = table.expect("described").table.expect("table");
    let mut types: Vec<(String, String)> = table
        .attribute_definitions()
        .iter()
        .map(|d| (d.attribute_name().to_owned(), d.attribute_type().as_str().to_owned()))
        .collect();
    types.sort();
    let expected = [
        ("assignee", "S"),
        ("created", "S"),
        ("due", "S"),
        ("pk", "S"),
        ("priority", "N"),
        ("region", "N"),
        ("sk", "S"),
        ("status", "S"),
        ("tenant", "S"),
    ];
    assert_eq!(types, expected.map(|(a, t)| (a.to_owned(), t.to_owned())));
    let index = table
        .global_secondary_indexes()
        .iter()
        .find(|i| i.index_name() == Some("by_status"))
        .expect("index");
    let schema: Vec<(&str, &str)> =
        index.key_schema().iter().map(|e| (e.attribute_name(), e.key_type().as_str())).collect();
    assert_eq!(
        schema,
        [("tenant", "HASH"), ("status", "HASH"), ("priority", "RANGE"), ("created", "RANGE")]
    );
    // Creating it again compares the layout, multi-attribute keys included.
    db.create_table().await?;
    Ok(())
}

#[tokio::test]
async fn items_store_their_fields_as_typed_key_attributes() -> Result<(), Error> {
    let db = support::db::<Shop>().await;
    let o = order("a", "open", 3, "2026-01-02");
    o.create(&db).await?;
    let raw = support::raw(&db, "ORDER#a", "ORDER").await.expect("stored");
    assert_eq!(raw.get("priority"), Some(&n(3)));
    assert_eq!(raw.get("created"), Some(&s("2026-01-02")));
    assert_eq!(raw.get("due"), Some(&s("2026-01-01")));
    assert_eq!(raw.get("region"), Some(&n(1)));
    // No synthetic key attribute, and the item reads back.
    assert!(raw.keys().all(|k| !k.starts_with("gsi")), "{raw:?}");
    assert_eq!(Order::get(&db, "a").await?, Some(o));
    Ok(())
}

#[tokio::test]
async fn queries_take_equalities_in_order_then_one_range() -> Result<(), Error> {
    let db = support::db::<Shop>().await;
    let orders = [
        order("a", "open", 1, "2026-01-01"),
        order("b", "open", 1, "2026-01-02"),
        order("c", "open", 1, "2026-02-01"),
        order("d", "open", 2, "2026-01-01"),
        order("e", "open", 3, "2026-01-05"),
        order("f", "shipped", 1, "2026-01-01"),
    ];
    for o in &orders {
        o.create(&db).await?;
    }
    let q = || Order::query_by_status(&db, "acme", "open");
    assert_eq!(ids(&q().await?), ["a", "b", "c", "d", "e"]);
    assert_eq!(ids(&q().priority(1).await?), ["a", "b", "c"]);
    assert_eq!(ids(&q().priority(1).created_on("2026-01-02").await?), ["b"]);
    assert_eq!(ids(&q().priority(1).created_on_lt("2026-01-02").all().await?), ["a"]);
    assert_eq!(ids(&q().priority(1).created_on_le("2026-01-02").all().await?), ["a", "b"]);
    assert_eq!(ids(&q().priority(1).created_on_gt("2026-01-02").all().await?), ["c"]);
    assert_eq!(ids(&q().priority(1).created_on_ge("2026-01-02").all().await?), ["b", "c"]);
    let between = q().priority(1).created_on_between("2026-01-02", "2026-02-01").all().await?;
    assert_eq!(ids(&between), ["b", "c"]);
    assert_eq!(ids(&q().priority(1).created_on_begins_with("2026-01").all().await?), ["a", "b"]);
    assert_eq!(ids(&q().priority_gt(1).all().await?), ["d", "e"]);
    assert_eq!(ids(&q().priority_between(2, 3).reverse().all().await?), ["e", "d"]);
    assert_eq!(ids(&q().priority_lt(2).limit(2).all().await?), ["a", "b"]);
    assert_eq!(q().priority_ge(2).count().await?, 2);
    assert_eq!(ids(&Order::partition_by_status(&db, "acme", "shipped").all().await?), ["f"]);
    // Filters as on any index, on attributes that are not the index's keys; the service
    // refuses a filter on a key attribute of the index, so it is refused before sending.
    let filtered = q().priority(1).filter(Order::NOTE.eq("")).all().await?;
    assert_eq!(ids(&filtered), ["a", "b", "c"]);
    let refused =
        crate::no_request!(db, q().filter(Order::CREATED_ON.ge("2026-01-02")).all().await);
    assert!(
        matches!(
            &refused,
            Err(Error::InvalidRequest { path, problem: RequestProblem::FilterOnIndexKey { .. } })
                if path == "created"
        ),
        "{refused:?}"
    );
    // Projections.
    let notes: Vec<Note> = q().priority(3).project([Order::NOTE.path()]).all().await?;
    assert_eq!(notes, [Note { note: String::new() }]);
    // An index with a partition key only, of a number attribute.
    assert_eq!(Order::query_by_region(&db, 1u16).count().await?, 6);
    assert!(Order::query_by_region(&db, 2u16).all().await?.is_empty());
    Ok(())
}

#[tokio::test]
async fn numbers_sort_as_numbers() -> Result<(), Error> {
    let db = support::db::<Shop>().await;
    for (i, p) in [100, 9, -5, 10, 0, -40, 1_000_000_000_000].into_iter().enumerate() {
        order(&format!("o{i}"), "open", p, "x").create(&db).await?;
    }
    let q = || Order::query_by_status(&db, "acme", "open");
    let priorities = |v: Vec<Order>| v.into_iter().map(|o| o.priority).collect::<Vec<_>>();
    assert_eq!(priorities(q().await?), [-40, -5, 0, 9, 10, 100, 1_000_000_000_000]);
    assert_eq!(priorities(q().priority_gt(9).all().await?), [10, 100, 1_000_000_000_000]);
    assert_eq!(priorities(q().priority_between(-5, 10).all().await?), [-5, 0, 9, 10]);
    assert_eq!(priorities(q().priority_lt(0).reverse().all().await?), [-5, -40]);
    Ok(())
}

#[tokio::test]
async fn unicode_and_separators_are_plain_values() -> Result<(), Error> {
    let db = support::db::<Shop>().await;
    let statuses = ["ouvert#é", "a/b|c~d:e%", "日本", "🦀", " "];
    for (i, st) in statuses.iter().enumerate() {
        order(&format!("u{i}"), st, 1, "🦀 crab").create(&db).await?;
        order(&format!("v{i}"), st, 1, "z").create(&db).await?;
    }
    for (i, st) in statuses.iter().enumerate() {
        let found = Order::query_by_status(&db, "acme", *st).priority(1).all().await?;
        assert_eq!(ids(&found), [format!("v{i}"), format!("u{i}")]);
        let crab =
            Order::query_by_status(&db, "acme", *st).priority(1).created_on_begins_with("🦀");
        assert_eq!(ids(&crab.all().await?), [format!("u{i}")]);
    }
    // Strings compare by their UTF-8 bytes.
    let found =
        Order::query_by_status(&db, "acme", "🦀").priority(1).created_on_gt("z").all().await?;
    assert_eq!(ids(&found), ["u3"]);
    Ok(())
}

#[tokio::test]
async fn values_no_index_can_hold_are_refused_before_sending() -> Result<(), Error> {
    let db = support::db::<Shop>().await;
    // A put whose field would be an empty key attribute.
    let err = crate::no_request!(db, order("a", "", 1, "x").create(&db).await.unwrap_err());
    assert!(matches!(
        &err,
        Error::InvalidKey { attribute, problem: KeyProblem::Empty, .. } if attribute == "status"
    ));
    let long = "x".repeat(1025);
    let err = crate::no_request!(db, order("a", "open", 1, &long).create(&db).await.unwrap_err());
    assert!(matches!(
        &err,
        Error::InvalidKey { problem: KeyProblem::TooLong { max: 1024, .. }, .. }
    ));
    // A query with an empty partition value, and an update that would empty a key attribute.
    let err =
        crate::no_request!(db, Order::query_by_status(&db, "acme", "").all().await.unwrap_err());
    assert!(matches!(&err, Error::InvalidKey { problem: KeyProblem::Empty, .. }));
    order("a", "open", 1, "x").create(&db).await?;
    let err =
        crate::no_request!(db, Order::update(&db, "a").set(Order::STATUS, "").await.unwrap_err());
    assert!(matches!(&err, Error::InvalidKey { problem: KeyProblem::Empty, .. }));
    // Ranges that hold no value send nothing; ranges that hold every value are no condition.
    let q = || Order::query_by_status(&db, "acme", "open").priority(1);
    assert!(crate::no_request!(db, q().created_on_lt("").all().await?).is_empty());
    assert!(crate::no_request!(db, q().created_on_between("b", "a").all().await?).is_empty());
    let none = crate::no_request!(
        db,
        Order::query_by_status(&db, "acme", "open").priority_between(3, 2).all().await?
    );
    assert!(none.is_empty());
    assert_eq!(ids(&q().created_on_ge("").all().await?), ["a"]);
    assert_eq!(ids(&q().created_on_begins_with("").all().await?), ["a"]);
    assert_eq!(ids(&q().created_on_between("", "x").all().await?), ["a"]);
    Ok(())
}

#[tokio::test]
async fn items_without_an_optional_attribute_are_not_in_its_index() -> Result<(), Error> {
    let db = support::db::<Shop>().await;
    let mut a = order("a", "open", 1, "x");
    a.assignee = Some("ann".into());
    let b = order("b", "open", 1, "y");
    a.create(&db).await?;
    b.create(&db).await?;
    let raw = support::raw(&db, "ORDER#b", "ORDER").await.expect("stored");
    assert!(!raw.contains_key("assignee"));
    assert_eq!(ids(&Order::query_by_assignee(&db, "acme", "ann").all().await?), ["a"]);
    // Giving `b` an assignee puts it in the index; removing `a`'s takes it out. One request
    // each: the field is the key attribute, nothing else to write.
    let sent = db.requests().total();
    Order::update(&db, "b").set(Order::ASSIGNEE, Some("ann".to_owned())).await?;
    Order::update(&db, "a").remove(Order::ASSIGNEE).await?;
    assert_eq!(db.requests().total() - sent, 2);
    assert_eq!(ids(&Order::query_by_assignee(&db, "acme", "ann").all().await?), ["b"]);
    // Setting it to `None` takes it out too (the attribute is removed, not set to NULL).
    let updated = Order::update(&db, "b").set(Order::ASSIGNEE, None::<String>).await?;
    assert_eq!(updated.assignee, None);
    assert!(!support::raw(&db, "ORDER#b", "ORDER").await.expect("stored").contains_key("assignee"));
    assert!(Order::query_by_assignee(&db, "acme", "ann").all().await?.is_empty());
    // Both are still in the index whose attributes they all have.
    assert_eq!(Order::query_by_status(&db, "acme", "open").count().await?, 2);
    Ok(())
}

#[tokio::test]
async fn updates_of_key_fields_move_items_in_the_index() -> Result<(), Error> {
    let db = support::db::<Shop>().await;
    for o in [order("a", "open", 1, "x"), order("b", "open", 2, "x")] {
        o.create(&db).await?;
    }
    let before = db.requests();
    let moved = Order::update(&db, "a")
        .set(Order::STATUS, "shipped")
        .set(Order::PRIORITY, 5i64)
        .set(Order::DUE, NaiveDate::from_ymd_opt(2026, 5, 1).expect("date"))
        .await?;
    let sent = db.requests() - before;
    assert_eq!((sent.total(), sent.get(Op::UpdateItem)), (1, 1), "one UpdateItem, nothing else");
    assert_eq!((moved.status.as_str(), moved.priority), ("shipped", 5));
    // Only the fields were written: no synthetic key attribute appeared.
    let raw = support::raw(&db, "ORDER#a", "ORDER").await.expect("stored");
    assert!(raw.keys().all(|k| !k.starts_with("gsi") && !k.starts_with('_') || k == "_type"));
    assert_eq!(ids(&Order::query_by_status(&db, "acme", "open").all().await?), ["b"]);
    let shipped = Order::query_by_status(&db, "acme", "shipped").priority(5).all().await?;
    assert_eq!(shipped, [moved]);
    // `add` on a number attribute moves the item too.
    Order::update(&db, "b").add(Order::PRIORITY, 10i64).await?;
    assert_eq!(
        ids(&Order::query_by_status(&db, "acme", "open").priority_gt(11).all().await?),
        ["b"]
    );
    Ok(())
}

#[tokio::test]
async fn pages_and_cursors_walk_the_index() -> Result<(), Error> {
    let db = support::db::<Shop>().await;
    let mut expected = Vec::new();
    for i in 0..23 {
        let o = order(&format!("p{i:02}"), "open", i % 4, &format!("c{:02}", 23 - i));
        o.create(&db).await?;
        expected.push(o);
    }
    expected.sort_by(|a, b| (a.priority, &a.created_on).cmp(&(b.priority, &b.created_on)));
    let q = || Order::query_by_status(&db, "acme", "open").priority_ge(0);
    let mut cursor = None;
    let mut seen = Vec::new();
    let before = db.requests().get(Op::Query);
    loop {
        let page = q().limit(5).page(cursor.as_ref()).await?;
        seen.extend(page.items);
        let Some(next) = page.next else { break };
        // The cursor goes out as text and comes back.
        cursor = Some(next.to_string().parse()?);
    }
    assert_eq!(seen, expected);
    assert!(db.requests().get(Op::Query) - before <= 6);
    // A cursor of another query is refused.
    let page = q().limit(5).page(None).await?;
    let other = Order::query_by_status(&db, "acme", "open").priority_ge(1);
    assert!(other.limit(5).page(page.next.as_ref()).await.is_err());
    // Streams read every page.
    let streamed: Vec<Order> = q().page_size(4).stream().try_collect().await?;
    assert_eq!(streamed, expected);
    Ok(())
}

/// One random order of the model.
fn arb_order() -> impl Strategy<Value = Order> {
    let text = || prop_oneof![Just(String::new()), "[ab#é🦀]{1,3}", any::<String>()];
    (
        "[a-z]{1,4}",
        prop_oneof![Just("open".to_owned()), Just("x#y".to_owned()), text()],
        prop_oneof![-3i64..3, any::<i64>()],
        text(),
        proptest::option::of(prop_oneof![Just("ann".to_owned()), text()]),
    )
        .prop_map(|(id, status, priority, created, assignee)| Order {
            id,
            status,
            priority,
            created_on: created,
            assignee,
            ..order("", "", 0, "")
        })
}

/// A random query on `by_status`: a partition, then 0 to 2 sort attributes fixed or ranged.
#[derive(Debug, Clone)]
enum Step {
    Whole,
    Priority(i64),
    PriorityRange(u8, i64, i64),
    Created(i64, u8, String, String),
    CreatedEq(i64, String),
}

fn arb_step() -> impl Strategy<Value = Step> {
    let text = || prop_oneof![Just(String::new()), "[ab#é🦀]{1,3}", any::<String>()];
    let number = || prop_oneof![-3i64..3, any::<i64>()];
    prop_oneof![
        Just(Step::Whole),
        number().prop_map(Step::Priority),
        (0u8..5, number(), number()).prop_map(|(op, a, b)| Step::PriorityRange(op, a, b)),
        (number(), 0u8..6, text(), text()).prop_map(|(p, op, a, b)| Step::Created(p, op, a, b)),
        (number(), text()).prop_map(|(p, c)| Step::CreatedEq(p, c)),
    ]
}

fn in_range<T: Ord>(op: u8, v: &T, a: &T, b: &T) -> bool {
    match op {
        0 => v < a,
        1 => v <= a,
        2 => v > a,
        3 => v >= a,
        _ => a <= v && v <= b,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("DDB_PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(12)
    ))]

    /// Random items and random valid queries against an in-memory model: every query returns
    /// exactly the model's items in the index's order (numbers by value, strings by UTF-8
    /// bytes), or is refused before sending when a value is one no key can hold.
    #[test]
    fn queries_match_a_model(
        orders in proptest::collection::vec(arb_order(), 1..16),
        steps in proptest::collection::vec((prop_oneof![Just("open".to_owned()), Just("x#y".to_owned())], arb_step()), 1..8),
    ) {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
        rt.block_on(async {
            let db = support::db::<Shop>().await;
            let mut model: BTreeMap<String, Order> = BTreeMap::new();
            for o in orders {
                let storable = !o.status.is_empty() && !o.created_on.is_empty()
                    && o.created_on.len() <= 1024 && o.status.len() <= 2048
                    && o.assignee.as_ref().is_none_or(|a| !a.is_empty());
                match o.put(&db).await {
                    Ok(()) => {
                        prop_assert!(storable, "stored {o:?}");
                        model.insert(o.id.clone(), o);
                    }
                    Err(Error::InvalidKey { .. }) => prop_assert!(!storable, "refused {o:?}"),
                    Err(e) => prop_assert!(false, "unexpected {e:?}"),
                }
            }
            for (status, step) in steps {
                let mut expected: Vec<&Order> =
                    model.values().filter(|o| o.status == status).collect();
                let q = Order::query_by_status(&db, "acme", status.as_str());
                let (query, refused) = match &step {
                    Step::Whole => (q.into_query(), false),
                    Step::Priority(p) => {
                        expected.retain(|o| o.priority == *p);
                        (q.priority(*p).into_query(), false)
                    }
                    Step::PriorityRange(op, a, b) => {
                        expected.retain(|o| in_range(*op, &o.priority, a, b));
                        let q = match op {
                            0 => q.priority_lt(*a),
                            1 => q.priority_le(*a),
                            2 => q.priority_gt(*a),
                            3 => q.priority_ge(*a),
                            _ => q.priority_between(*a, *b),
                        };
                        (q, false)
                    }
                    Step::CreatedEq(p, c) => {
                        expected.retain(|o| o.priority == *p && o.created_on == *c);
                        (q.priority(*p).created_on(c.as_str()), c.is_empty() || c.len() > 1024)
                    }
                    Step::Created(p, op, a, b) => {
                        expected.retain(|o| o.priority == *p);
                        let q = q.priority(*p);
                        let (a_s, b_s) = (a.as_bytes(), b.as_bytes());
                        let q = match op {
                            0 => q.created_on_lt(a.as_str()),
                            1 => q.created_on_le(a.as_str()),
                            2 => q.created_on_gt(a.as_str()),
                            3 => q.created_on_ge(a.as_str()),
                            4 => q.created_on_between(a.as_str(), b.as_str()),
                            _ => q.created_on_begins_with(a.as_str()),
                        };
                        if *op == 5 {
                            expected.retain(|o| o.created_on.starts_with(a.as_str()));
                        } else {
                            expected.retain(|o| in_range(*op, &o.created_on.as_bytes(), &a_s, &b_s));
                        }
                        // Bounds longer than a key are refused, unless the range was dropped
                        // (empty lower bound) or holds nothing.
                        let long = |t: &str| t.len() > 1024;
                        let refused = match op {
                            4 => !(a_s > b_s || b.is_empty()) && (long(a) || long(b)),
                            _ => long(a),
                        };
                        (q, refused)
                    }
                };
                expected.sort_by(|x, y| {
                    (x.priority, x.created_on.as_bytes()).cmp(&(y.priority, y.created_on.as_bytes()))
                });
                let sent = db.requests().total();
                match query.all().await {
                    Ok(found) => {
                        prop_assert!(!refused, "{step:?} was sent");
                        // Equal index keys come in any order: compare as sorted by id too.
                        let key = |o: &Order| (o.priority, o.created_on.clone().into_bytes(), o.id.clone());
                        let mut got: Vec<Order> = found;
                        got.sort_by_key(key);
                        let mut want: Vec<Order> = expected.into_iter().cloned().collect();
                        want.sort_by_key(key);
                        prop_assert_eq!(got, want, "{:?}", step);
                    }
                    Err(Error::InvalidKey { .. }) => {
                        prop_assert!(refused, "{step:?} refused");
                        prop_assert_eq!(db.requests().total(), sent);
                    }
                    Err(e) => prop_assert!(false, "unexpected {e:?} for {step:?}"),
                }
            }
            Ok(())
        })?;
    }
}

/// The migration from a concatenated index key to a multi-attribute one, on a table that has
/// both indexes (the new one added alongside the old: the fields are stored already, so the
/// service fills it from the existing items).
#[derive(Table)]
#[table(
    name = "multi-migration",
    gsi(name = "gsi1", pk = "gsi1pk", sk = "gsi1sk"),
    gsi(name = "by_status", pk = ["tenant", "status"], sk = ["priority": N, "created"])
)]
struct Both;

/// Before: the index key is written by templates into `gsi1pk` / `gsi1sk`.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = Both, name = "Ticket", pk = "TICKET#<id>", sk = "TICKET")]
#[index(gsi1, pk = "TENANT#<tenant>#<status>", sk = "<priority>#<created>")]
struct TicketV1 {
    id: String,
    tenant: String,
    status: String,
    priority: u32,
    created: String,
}

/// After: the same items, the fields themselves keying `by_status`.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = Both, name = "Ticket", pk = "TICKET#<id>", sk = "TICKET")]
#[index(by_status, pk = [tenant, status], sk = [priority, created])]
struct Ticket {
    id: String,
    tenant: String,
    status: String,
    priority: u32,
    created: String,
}

#[tokio::test]
async fn a_concatenated_index_migrates_to_a_multi_attribute_one() -> Result<(), Error> {
    let db = support::db::<Both>().await;
    let v1 = |id: &str, priority: u32, created: &str| TicketV1 {
        id: id.into(),
        tenant: "acme".into(),
        status: "open".into(),
        priority,
        created: created.into(),
    };
    for t in [v1("a", 9, "2026-01-02"), v1("b", 10, "2026-01-01"), v1("c", 2, "2026-01-03")] {
        t.create(&db).await?;
    }
    // Old query: the concatenated sort key (integers written at fixed width).
    let raw = support::raw(&db, "TICKET#b", "TICKET").await.expect("stored");
    assert_eq!(raw.get("gsi1pk"), Some(&s("TENANT#acme#open")));
    let old: Vec<String> =
        TicketV1::query_gsi1(&db, "acme", "open").all().await?.into_iter().map(|t| t.id).collect();
    assert_eq!(old, ["c", "a", "b"]);
    // Step 1: the new index holds the items already: switch the queries.
    let new = Ticket::query_by_status(&db, "acme", "open").all().await?;
    assert_eq!(new.iter().map(|t| t.id.as_str()).collect::<Vec<_>>(), ["c", "a", "b"]);
    assert_eq!(Ticket::query_by_status(&db, "acme", "open").priority_ge(9).count().await?, 2);
    // Step 2: rewrite every item with the new entity (a scan and a put each): the synthetic
    // attributes are gone, the old index is empty, and the old index can be dropped.
    let all: Vec<Ticket> = db.scan::<Ticket>().all().await?;
    assert_eq!(all.len(), 3);
    for t in &all {
        t.put(&db).await?;
    }
    let raw = support::raw(&db, "TICKET#a", "TICKET").await.expect("stored");
    assert!(!raw.contains_key("gsi1pk") && !raw.contains_key("gsi1sk"), "{raw:?}");
    assert!(TicketV1::query_gsi1(&db, "acme", "open").all().await?.is_empty());
    assert_eq!(Ticket::query_by_status(&db, "acme", "open").count().await?, 3);
    Ok(())
}

/// Other attribute types: a UUID partition, a `u64` and a `char` sort.
#[derive(Table)]
#[table(name = "multi-ids", gsi(name = "by_owner", pk = ["owner"], sk = ["seq": N, "grade"]))]
struct Ids;

#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = Ids, pk = "DOC#<id>", sk = "DOC")]
#[index(by_owner, pk = [owner], sk = [seq, grade])]
struct Doc {
    id: u32,
    owner: ddb_model::uuid::Uuid,
    seq: u64,
    grade: char,
}

#[tokio::test]
async fn uuids_large_numbers_and_chars_are_key_attributes() -> Result<(), Error> {
    let db = support::db::<Ids>().await;
    let owner = ddb_model::uuid::Uuid::from_u128(0x1234_5678_9abc_def0_1234_5678_9abc_def0);
    let other = ddb_model::uuid::Uuid::from_u128(7);
    let docs = [
        Doc { id: 1, owner, seq: u64::MAX, grade: 'a' },
        Doc { id: 2, owner, seq: 0, grade: 'é' },
        Doc { id: 3, owner, seq: 10, grade: 'b' },
        Doc { id: 4, owner: other, seq: 5, grade: 'a' },
    ];
    for d in &docs {
        d.create(&db).await?;
    }
    let raw = support::raw(&db, Doc::key(1u32).pk(), "DOC").await.expect("stored");
    assert_eq!(raw.get("owner"), Some(&s(&owner.to_string())));
    assert_eq!(raw.get("seq"), Some(&n(u64::MAX)));
    let seqs = |v: Vec<Doc>| v.into_iter().map(|d| d.id).collect::<Vec<_>>();
    assert_eq!(seqs(Doc::query_by_owner(&db, owner).await?), [2, 3, 1]);
    assert_eq!(seqs(Doc::query_by_owner(&db, owner).seq_gt(10u64).all().await?), [1]);
    assert_eq!(seqs(Doc::query_by_owner(&db, owner).seq(0u64).grade_ge('b').all().await?), [2]);
    assert_eq!(seqs(Doc::query_by_owner(&db, other).all().await?), [4]);
    Ok(())
}

/// Another entity of the table whose own field is stored under an attribute name a
/// multi-attribute index declares (`created`, a string there; a number here).
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = Shop, pk = "LOG#<id>", sk = "LOG")]
struct Log {
    id: String,
    created: u64,
}

/// The attributes of a multi-attribute index are typed table-wide: any entity of the table
/// that stores an attribute of that name must store the declared type, or every write of it
/// is refused before sending (the service would reject the item).
#[tokio::test]
async fn an_attribute_of_a_multi_attribute_key_is_typed_for_every_entity() -> Result<(), Error> {
    let db = support::db::<Shop>().await;
    let log = Log { id: "l".into(), created: 7 };
    let err = crate::no_request!(db, log.create(&db).await.unwrap_err());
    assert!(
        matches!(
            &err,
            Error::InvalidKey { entity: "Log", attribute, problem: KeyProblem::WrongType { expected: "S" } }
                if attribute == "created"
        ),
        "{err:?}"
    );
    let err = crate::no_request!(db, Log::update(&db, "l").set(Log::CREATED, 8u64).upsert().await);
    assert!(matches!(err, Err(Error::InvalidKey { .. })), "{err:?}");
    Ok(())
}
