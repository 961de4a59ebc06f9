//! Queries: every level of composite sort keys (seed 003), ranges, indexes, filters, paging,
//! cursors, counting, projections and item collections — results and request counts.

use std::collections::BTreeSet;

use ddb_model::error::CursorReason;
use ddb_model::{Cursor, Db, DefaultTable, Error, Op};
use futures_util::TryStreamExt;
use serde::Deserialize;

use crate::model::{App, Kv, Order, Session, Status, Store, User, UserItems, UserItemsOrOther};
use crate::no_request;
use crate::support::{db, put_raw, s};

fn store(country: &str, state: &str, city: &str, zip: &str, address: &str, sq: u32) -> Store {
    Store {
        country: country.into(),
        state: state.into(),
        city: city.into(),
        zip: zip.into(),
        address: address.into(),
        square_feet: sq,
    }
}

/// The store-locator table of seed 003, plus stores that share textual prefixes with it
/// (state `NYC`, city `NEWYORK`) to prove that every level matches whole components.
async fn store_locator() -> Db {
    let db = db::<DefaultTable>().await;
    let stores = [
        store("USA", "NE", "OMAHA", "68118", "#100 St Andrews lane", 921),
        store("USA", "NY", "NEWYORKCITY", "10001", "#675 6th Ave", 1211),
        store("USA", "NY", "NEWYORKCITY", "10019", "1500 Broadway", 1924),
        store("FRANCE", "ILE-DE-FRANCE", "PARIS", "75001", "26 Avenue de I'Opera", 2102),
        store("USA", "NYC", "NEWYORKCITY", "10001", "prefix trap: state NYC", 10),
        store("USA", "NY", "NEWYORK", "10001", "prefix trap: city NEWYORK", 20),
    ];
    for s in &stores {
        s.put(&db).await.unwrap();
    }
    db.reset_requests();
    db
}

fn addresses(stores: &[Store]) -> Vec<&str> {
    stores.iter().map(|s| s.address.as_str()).collect()
}

#[tokio::test]
async fn store_locator_at_all_four_levels() {
    let db = store_locator().await;

    // 1. Country.
    let usa = Store::query(&db, "USA").all().await.unwrap();
    assert_eq!(usa.len(), 5);
    assert_eq!(db.requests().get(Op::Query), 1);

    // 2. Country and state: `NY` never matches `NYC`.
    let ny = Store::query(&db, "USA").state("NY").all().await.unwrap();
    assert_eq!(
        addresses(&ny),
        ["prefix trap: city NEWYORK", "#675 6th Ave", "1500 Broadway"],
        "sorted by sort key"
    );

    // 3. Country, state and city: `NEWYORK` never matches `NEWYORKCITY`.
    let nyc = Store::query(&db, "USA").state("NY").city("NEWYORKCITY").all().await.unwrap();
    assert_eq!(addresses(&nyc), ["#675 6th Ave", "1500 Broadway"]);
    let newyork = Store::query(&db, "USA").state("NY").city("NEWYORK").all().await.unwrap();
    assert_eq!(addresses(&newyork), ["prefix trap: city NEWYORK"]);

    // 4. Country, state, city and zip: the full key.
    let zip = Store::query(&db, "USA").state("NY").city("NEWYORKCITY").zip("10019").await.unwrap();
    assert_eq!(addresses(&zip), ["1500 Broadway"]);

    let paris = Store::query(&db, "FRANCE").state("ILE-DE-FRANCE").city("PARIS").await.unwrap();
    assert_eq!(paris.len(), 1);
    assert_eq!(paris[0].square_feet, 2102);
    assert!(Store::query(&db, "GERMANY").all().await.unwrap().is_empty());

    // One request per query, whatever the level.
    assert_eq!(db.requests().get(Op::Query), 7);
    assert_eq!(db.requests().total(), 7);
}

#[tokio::test]
async fn ranges_on_the_next_level() {
    let db = store_locator().await;
    let zips = |stores: Vec<Store>| stores.into_iter().map(|s| s.zip).collect::<Vec<_>>();

    let q = || Store::query(&db, "USA").state("NY").city("NEWYORKCITY");
    assert_eq!(zips(q().zip_between("10000", "10010").all().await.unwrap()), ["10001"]);
    assert_eq!(zips(q().zip_gt("10001").all().await.unwrap()), ["10019"]);
    assert_eq!(zips(q().zip_ge("10001").all().await.unwrap()), ["10001", "10019"]);
    assert_eq!(zips(q().zip_lt("10019").all().await.unwrap()), ["10001"]);
    assert_eq!(zips(q().zip_le("10019").all().await.unwrap()), ["10001", "10019"]);
    assert_eq!(zips(q().zip_begins_with("100").all().await.unwrap()), ["10001", "10019"]);

    // On a middle level: states from N to NY inclusive are NE and NY (not NYC, which sorts
    // after NY).
    let states: BTreeSet<String> = Store::query(&db, "USA")
        .state_between("N", "NY")
        .all()
        .await
        .unwrap()
        .into_iter()
        .map(|s| s.state)
        .collect();
    assert_eq!(states, BTreeSet::from(["NE".to_owned(), "NY".to_owned()]));
    let states: BTreeSet<String> = Store::query(&db, "USA")
        .state_gt("NY")
        .all()
        .await
        .unwrap()
        .into_iter()
        .map(|s| s.state)
        .collect();
    assert_eq!(states, BTreeSet::from(["NYC".to_owned()]));
    assert_eq!(Store::query(&db, "USA").state_begins_with("NY").all().await.unwrap().len(), 4);

    // An empty range sends nothing.
    let none = no_request!(db, q().zip_between("2", "1").all().await.unwrap());
    assert!(none.is_empty());
}

/// Values with characters that sort below the separator (`NEW YORK` < `NEW#...`) still give
/// exactly the component range, compared with a brute-force filter.
#[tokio::test]
async fn ranges_are_exact_for_awkward_values() {
    let db = db::<DefaultTable>().await;
    let cities = ["NEW", "NEW YORK", "NEW!", "NEWARK", "NEW#HAVEN", "NE", "N", "OMAHA", "a b"];
    for (i, city) in cities.iter().enumerate() {
        store("USA", "X", city, &format!("{i:05}"), city, 1).put(&db).await.unwrap();
    }
    let bounds = ["NE", "NEW", "NEW YORK", "NEWA", "O"];
    for lo in bounds {
        for hi in bounds {
            let got: BTreeSet<String> = Store::query(&db, "USA")
                .state("X")
                .city_between(lo, hi)
                .all()
                .await
                .unwrap()
                .into_iter()
                .map(|s| s.city)
                .collect();
            let escaped = |v: &str| v.replace('#', "%23");
            let want: BTreeSet<String> = cities
                .iter()
                .filter(|c| escaped(c) >= escaped(lo) && escaped(c) <= escaped(hi))
                .map(|c| c.to_string())
                .collect();
            assert_eq!(got, want, "city between {lo:?} and {hi:?}");
        }
    }
}

async fn orders(db: &Db<App>, user: &str, n: u64) {
    for seq in 0..n {
        let order = Order {
            user: user.into(),
            year: 2024,
            seq,
            status: if seq % 3 == 0 { Status::Shipped } else { Status::Open },
            total_cents: seq as i64 * 100,
            version: 0,
        };
        order.clone().put(db).await.unwrap();
    }
}

#[tokio::test]
async fn a_query_of_n_pages_is_n_requests() {
    let db = db::<App>().await;
    orders(&db, "alice", 35).await;
    orders(&db, "bob", 3).await;
    User::sample("alice").create(&db).await.unwrap();
    db.reset_requests();

    // 35 orders, 10 per request: 4 requests; items in sort-key order, once each.
    let all: Vec<Order> =
        Order::query(&db, "alice").page_size(10).stream().try_collect().await.unwrap();
    assert_eq!(all.iter().map(|o| o.seq).collect::<Vec<_>>(), (0..35).collect::<Vec<_>>());
    assert_eq!(db.requests().get(Op::Query), 4);

    // With a limit, the last request asks only for what is missing: 10 + 10 + 5.
    db.reset_requests();
    let first25 = Order::query(&db, "alice").page_size(10).limit(25).all().await.unwrap();
    assert_eq!(first25.len(), 25);
    assert_eq!(db.requests().get(Op::Query), 3);

    // Reverse order, one level fixed.
    db.reset_requests();
    let newest = Order::query(&db, "alice").year(2024).reverse().limit(3).all().await.unwrap();
    assert_eq!(newest.iter().map(|o| o.seq).collect::<Vec<_>>(), [34, 33, 32]);
    assert_eq!(db.requests().get(Op::Query), 1);

    // `first`, and the profile in the same partition is never read as an order.
    let first = Order::query(&db, "alice").first().await.unwrap().unwrap();
    assert_eq!(first.seq, 0);
    assert_eq!(Order::partition(&db, "alice").count().await.unwrap(), 35);
}

#[tokio::test]
async fn pages_and_cursors() {
    let db = db::<App>().await;
    orders(&db, "alice", 35).await;
    orders(&db, "bob", 5).await;
    db.reset_requests();

    let mut seen = Vec::new();
    let mut cursor: Option<Cursor> = None;
    let mut pages = 0;
    loop {
        let page = Order::query(&db, "alice").limit(10).page(cursor.as_ref()).await.unwrap();
        pages += 1;
        seen.extend(page.items.iter().map(|o| o.seq));
        // A cursor travels as URL-safe text and comes back.
        let Some(next) = page.next else { break };
        assert!(next.as_str().bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'));
        cursor = Some(next.as_str().parse().unwrap());
    }
    assert_eq!(seen, (0..35).collect::<Vec<_>>());
    // Three full pages and a last one of 5; each page is one request.
    assert_eq!(pages, 4);
    assert_eq!(db.requests().get(Op::Query), 4);

    // A cursor is bound to its query.
    let page = Order::query(&db, "alice").limit(10).page(None).await.unwrap();
    let cursor = page.next.unwrap();
    let wrong_partition =
        no_request!(db, Order::query(&db, "bob").limit(10).page(Some(&cursor)).await);
    assert!(
        matches!(wrong_partition, Err(Error::InvalidCursor { reason: CursorReason::OtherQuery })),
        "{wrong_partition:?}"
    );
    let wrong_order =
        no_request!(db, Order::query(&db, "alice").reverse().limit(10).page(Some(&cursor)).await);
    assert!(matches!(wrong_order, Err(Error::InvalidCursor { .. })));
    let wrong_filter = no_request!(
        db,
        Order::query(&db, "alice")
            .filter(Order::STATUS.eq(Status::Open))
            .limit(10)
            .page(Some(&cursor))
            .await
    );
    assert!(matches!(wrong_filter, Err(Error::InvalidCursor { .. })));
    let wrong_entity =
        no_request!(db, User::partition(&db, "alice").limit(10).page(Some(&cursor)).await);
    assert!(matches!(wrong_entity, Err(Error::InvalidCursor { .. })));

    // Edited cursors are rejected: every single-character change.
    let text = cursor.as_str().to_owned();
    for i in 0..text.len() {
        let mut bytes = text.clone().into_bytes();
        bytes[i] = if bytes[i] == b'x' { b'y' } else { b'x' };
        let edited = String::from_utf8(bytes).unwrap();
        let result = match Cursor::parse(&edited) {
            Ok(c) => no_request!(db, Order::query(&db, "alice").limit(10).page(Some(&c)).await),
            Err(e) => Err(e),
        };
        assert!(matches!(result, Err(Error::InvalidCursor { .. })), "edit at {i} accepted");
    }
    let not_a_cursor = Cursor::parse("%%%").unwrap_err();
    assert!(matches!(not_a_cursor, Error::InvalidCursor { reason: CursorReason::NotACursor }));
    assert_eq!(not_a_cursor.to_string(), "invalid cursor: the text is not a ddb-model cursor");

    // The right cursor continues where the page ended.
    let next = Order::query(&db, "alice").limit(10).page(Some(&cursor)).await.unwrap();
    assert_eq!(next.items.first().map(|o| o.seq), Some(10));
}

#[tokio::test]
async fn filters_keep_paging_until_the_limit() {
    let db = db::<App>().await;
    orders(&db, "alice", 30).await;
    db.reset_requests();

    // Shipped orders are every third one (0, 3, 6, ...): 10 of 30. With 5 items evaluated per
    // request, 5 shipped orders need 15 evaluated items: 3 requests, never a short page.
    let page = Order::query(&db, "alice")
        .filter(Order::STATUS.eq(Status::Shipped))
        .page_size(5)
        .limit(5)
        .page(None)
        .await
        .unwrap();
    assert_eq!(page.items.iter().map(|o| o.seq).collect::<Vec<_>>(), [0, 3, 6, 9, 12]);
    assert_eq!(db.requests().get(Op::Query), 3);
    let rest = Order::query(&db, "alice")
        .filter(Order::STATUS.eq(Status::Shipped))
        .page_size(5)
        .limit(5)
        .page(page.next.as_ref())
        .await
        .unwrap();
    assert_eq!(rest.items.iter().map(|o| o.seq).collect::<Vec<_>>(), [15, 18, 21, 24, 27]);

    // Typed filters combine.
    let big_open = Order::query(&db, "alice")
        .filter(Order::STATUS.eq(Status::Open) & Order::TOTAL_CENTS.ge(2500))
        .all()
        .await
        .unwrap();
    assert_eq!(big_open.iter().map(|o| o.seq).collect::<Vec<_>>(), [25, 26, 28, 29]);
}

#[tokio::test]
async fn counting() {
    let db = db::<App>().await;
    orders(&db, "alice", 30).await;
    User::sample("alice").create(&db).await.unwrap();
    db.reset_requests();
    assert_eq!(Order::query(&db, "alice").count().await.unwrap(), 30);
    assert_eq!(db.requests().get(Op::Query), 1);
    assert_eq!(
        Order::query(&db, "alice").filter(Order::STATUS.eq(Status::Shipped)).count().await.unwrap(),
        10
    );
    assert_eq!(Order::query(&db, "alice").year(2024).seq_lt(7).count().await.unwrap(), 7);
    assert_eq!(Order::query(&db, "alice").limit(12).page_size(5).count().await.unwrap(), 12);
}

#[tokio::test]
async fn queries_on_indexes() {
    let db = db::<App>().await;
    for (id, org, name) in [
        ("1", "acme", "bob"),
        ("2", "acme", "bobby"),
        ("3", "acme", "alice"),
        ("4", "initech", "bob"),
    ] {
        let mut u = User::sample(id);
        u.org = org.into();
        u.name = name.into();
        u.create(&db).await.unwrap();
    }
    db.reset_requests();

    // gsi1: ORG#<org> / USER#<name>#<id>.
    let acme = User::query_gsi1(&db, "acme").all().await.unwrap();
    assert_eq!(acme.iter().map(|u| u.name.as_str()).collect::<Vec<_>>(), ["alice", "bob", "bobby"]);
    let bobs = User::query_gsi1(&db, "acme").name("bob").all().await.unwrap();
    assert_eq!(bobs.iter().map(|u| u.id.as_str()).collect::<Vec<_>>(), ["1"], "bob is not bobby");
    let b = User::query_gsi1(&db, "acme").name_begins_with("bob").all().await.unwrap();
    assert_eq!(b.len(), 2);
    let exact = User::query_gsi1(&db, "acme").name("bobby").id("2").all().await.unwrap();
    assert_eq!(exact.len(), 1);

    // gsi2: EMAIL#<email>, no sort key (users without e-mail are not in it).
    let by_email = User::query_gsi2(&db, "3@acme.test").first().await.unwrap().unwrap();
    assert_eq!(by_email.name, "alice");

    // Paging works on indexes too (the cursor carries the index and table keys).
    let page = User::query_gsi1(&db, "acme").limit(2).page(None).await.unwrap();
    assert_eq!(page.items.len(), 2);
    let rest = User::query_gsi1(&db, "acme").limit(2).page(page.next.as_ref()).await.unwrap();
    assert_eq!(rest.items.iter().map(|u| u.name.as_str()).collect::<Vec<_>>(), ["bobby"]);
    assert_eq!(db.requests().get(Op::Query), 7);
}

#[tokio::test]
async fn tables_without_sort_key() {
    let db = db::<Kv>().await;
    let session = Session { token: "t1".into(), user: "alice".into() };
    session.put(&db).await.unwrap();
    assert_eq!(Session::query(&db, "t1").all().await.unwrap(), [session]);
    assert!(Session::query(&db, "t2").all().await.unwrap().is_empty());
}

#[tokio::test]
async fn projections() {
    #[derive(Deserialize, Debug, PartialEq)]
    struct Place {
        city: String,
        square_feet: u32,
    }
    let db = store_locator().await;
    let places: Vec<Place> = Store::query(&db, "USA")
        .state("NY")
        .city("NEWYORKCITY")
        .project::<Place>([Store::CITY.path(), Store::SQUARE_FEET.path()])
        .all()
        .await
        .unwrap();
    assert_eq!(
        places,
        [
            Place { city: "NEWYORKCITY".into(), square_feet: 1211 },
            Place { city: "NEWYORKCITY".into(), square_feet: 1924 }
        ]
    );
}

#[tokio::test]
async fn item_collections() {
    let db = db::<App>().await;
    let alice = User::sample("alice");
    alice.create(&db).await.unwrap();
    orders(&db, "alice", 3).await;
    orders(&db, "bob", 2).await;
    db.reset_requests();

    // One query, three entity types' worth of typed results.
    let items = User::partition(&db, "alice").collection::<UserItems>().all().await.unwrap();
    assert_eq!(db.requests().get(Op::Query), 1);
    let users: Vec<&User> = items
        .iter()
        .filter_map(|i| if let UserItems::User(u) = i { Some(u) } else { None })
        .collect();
    let orders: Vec<u64> = items
        .iter()
        .filter_map(|i| if let UserItems::Order(o) = i { Some(o.seq) } else { None })
        .collect();
    assert_eq!(users, [&alice]);
    assert_eq!(orders, [0, 1, 2]);

    // An entity query of the partition never reads the other types.
    assert_eq!(User::partition(&db, "alice").all().await.unwrap(), std::slice::from_ref(&alice));

    // An item of a type the collection does not list is reported, not mistaken.
    let mut ghost = ddb_model::Item::new();
    ghost.insert("pk".into(), s("USER#alice"));
    ghost.insert("sk".into(), s("GHOST#1"));
    ghost.insert("_type".into(), s("Ghost"));
    put_raw(&db, ghost.clone()).await;
    let err = User::partition(&db, "alice").collection::<UserItems>().all().await.unwrap_err();
    match err {
        Error::UnknownEntityType { collection, found, key } => {
            assert_eq!(collection, "UserItems");
            assert_eq!(found.as_deref(), Some("Ghost"));
            assert!(key.contains("GHOST#1"), "{key}");
        }
        other => panic!("expected UnknownEntityType, got {other:?}"),
    }
    // ...or kept as a raw item by an `other` variant.
    let items = User::partition(&db, "alice").collection::<UserItemsOrOther>().all().await.unwrap();
    assert_eq!(items.len(), 5);
    assert!(items.contains(&UserItemsOrOther::Other(ghost)));

    // A listed type whose item is corrupt is an error too (never a default struct).
    let mut bad = ddb_model::Item::new();
    bad.insert("pk".into(), s("USER#alice"));
    bad.insert("sk".into(), s("ORDER#2024#x"));
    bad.insert("_type".into(), s("Order"));
    put_raw(&db, bad).await;
    let err = User::partition(&db, "alice").collection::<UserItemsOrOther>().all().await;
    assert!(err.is_err());
}

#[tokio::test]
async fn invalid_keys_are_rejected_before_sending() {
    let db = store_locator().await;
    let long = "x".repeat(3000);
    let err = no_request!(db, Store::query(&db, long.as_str()).all().await.unwrap_err());
    assert!(matches!(err, Error::InvalidKey { .. }), "{err:?}");
    let err = no_request!(db, Store::query(&db, "").all().await.unwrap_err());
    assert!(matches!(err, Error::InvalidKey { .. }), "{err:?}");
}

/// An entity's query over a partition shared with other entity types: the entity-type filter
/// drops the others, and the query then reads full pages instead of one item at a time.
#[tokio::test]
async fn limits_over_a_shared_partition_do_not_crawl() {
    let db = db::<App>().await;
    orders(&db, "alice", 40).await; // ORDER#... sorts before PROFILE
    let alice = User::sample("alice");
    alice.create(&db).await.unwrap();
    db.reset_requests();

    // The first request asks for one item and gets an order, which the filter drops; the
    // second reads on to the profile.
    let first = User::partition(&db, "alice").first().await.unwrap();
    assert_eq!(first, Some(alice.clone()));
    assert_eq!(db.requests().get(Op::Query), 2);

    db.reset_requests();
    let page = User::partition(&db, "alice").limit(1).page(None).await.unwrap();
    assert_eq!(page.items, [alice]);
    assert_eq!(db.requests().get(Op::Query), 2);
}

/// Tree paths as key components: a subtree is one prefix query, exact even with separators
/// inside segment names (the Drive D folders of seed 002).
#[tokio::test]
async fn tree_paths_in_keys() {
    use crate::model::Folder;
    use ddb_model::TreePath;

    let db = db::<DefaultTable>().await;
    let paths = [
        "D",
        "D/III",
        "D/III/a",
        "D/III/b",
        "D/IV",
        "D/IV/c",
        "D/V",
        "D/V/d",
        "D/V/d/i",
        "D/V/d/ii",
        "D/V/d/iii",
        "D/V/e",
        "D/V%2Fd",
        "D/VI",
    ];
    for p in paths {
        Folder { drive: "d1".into(), path: p.parse().unwrap() }.put(&db).await.unwrap();
    }
    let v: TreePath = "D/V".parse().unwrap();
    db.reset_requests();
    let below_v: Vec<String> = Folder::query(&db, "d1")
        .path_begins_with(&format!("{v}/"))
        .all()
        .await
        .unwrap()
        .into_iter()
        .map(|f| f.path.to_string())
        .collect();
    // Not `D/V%2Fd` (a folder named "V/d"), not `D/VI`.
    assert_eq!(below_v, ["D/V/d", "D/V/d/i", "D/V/d/ii", "D/V/d/iii", "D/V/e"]);
    assert_eq!(db.requests().get(Op::Query), 1);
    let folder =
        Folder::get(&db, "d1", "D/V%2Fd".parse::<TreePath>().unwrap()).await.unwrap().unwrap();
    assert_eq!(folder.path.segments(), ["D", "V/d"]);
}

mod customer_view {
    use ddb_model::prelude::*;
    use ddb_model::{DefaultTable, Item, Op};
    use serde::{Deserialize, Serialize};

    use crate::support;

    #[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
    #[entity(pk = "CUSTOMER#<id>", sk = "CUSTOMER")]
    pub struct Customer {
        id: String,
        name: String,
    }

    #[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
    #[entity(pk = "CUSTOMER#<customer>", sk = "ADDRESS#<label>")]
    pub struct Address {
        customer: String,
        label: String,
        street: String,
    }

    #[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
    #[entity(pk = "CUSTOMER#<customer>", sk = "ORDER#<seq>")]
    pub struct CustomerOrder {
        customer: String,
        seq: u32,
        total: u64,
    }

    /// A customer without their addresses.
    #[derive(Collection, Debug, Clone, PartialEq)]
    pub enum CustomerView {
        Customer(Customer),
        Order(CustomerOrder),
    }

    /// The same, with a catch-all variant (which `collection_only` never fills).
    #[derive(Collection, Debug, Clone, PartialEq)]
    pub enum CustomerViewOrOther {
        Customer(Customer),
        Order(CustomerOrder),
        #[collection(other)]
        Other(Item),
    }

    async fn populated() -> Db<DefaultTable> {
        let db = support::db::<DefaultTable>().await;
        for id in ["c1", "c2"] {
            let customer = Customer { id: id.into(), name: format!("name {id}") };
            let addresses: Vec<Address> = (0..30)
                .map(|i| Address {
                    customer: id.into(),
                    label: format!("a{i:02}"),
                    street: "x".repeat(2000),
                })
                .collect();
            let orders: Vec<CustomerOrder> = (0..5)
                .map(|seq| CustomerOrder { customer: id.into(), seq, total: u64::from(seq) * 10 })
                .collect();
            db.batch_put(&addresses).put_all(&orders).put(&customer).await.expect("populate");
        }
        db.reset_requests();
        db
    }

    #[tokio::test]
    async fn a_collection_of_some_entity_types_reads_only_their_items_in_one_query()
    -> Result<(), Error> {
        let db = populated().await;
        let before = db.requests();
        let view = Customer::partition(&db, "c1").collection_only::<CustomerView>().all().await?;
        let spent = db.requests() - before;
        assert_eq!(spent.get(Op::Query), 1, "one query");
        assert_eq!(spent.items_read(), 36, "DynamoDB reads the addresses before filtering");
        // Sort-key order: ADDRESS#.. (left out), CUSTOMER, ORDER#..
        assert!(matches!(&view[0], CustomerView::Customer(c) if c.id == "c1"));
        let seqs: Vec<u32> = view[1..]
            .iter()
            .map(|v| match v {
                CustomerView::Order(o) => o.seq,
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(seqs, [0, 1, 2, 3, 4]);

        // The plain collection refuses the address items it does not list.
        let err = Customer::partition(&db, "c1").collection::<CustomerView>().all().await;
        assert!(matches!(err, Err(Error::UnknownEntityType { .. })), "{err:?}");
        // A catch-all variant receives nothing when the types are kept.
        let view =
            Customer::partition(&db, "c1").collection_only::<CustomerViewOrOther>().all().await?;
        assert_eq!(view.len(), 6);
        assert!(!view.iter().any(|v| matches!(v, CustomerViewOrOther::Other(_))));

        // Counts, filters, reverse order, limits and pages with cursors.
        let query = || Customer::partition(&db, "c1").collection_only::<CustomerView>();
        assert_eq!(query().count().await?, 6);
        assert_eq!(query().reverse().first().await?, view_last(&db).await?);
        let mut seen = Vec::new();
        let mut cursor: Option<ddb_model::Cursor> = None;
        loop {
            let page = query().limit(4).page(cursor.as_ref()).await?;
            seen.extend(page.items);
            match page.next {
                Some(next) => cursor = Some(next),
                None => break,
            }
        }
        assert_eq!(seen.len(), 6, "pages of kept items, nothing twice");
        Ok(())
    }

    async fn view_last(db: &Db<DefaultTable>) -> Result<Option<CustomerView>, Error> {
        let all = Customer::partition(db, "c1").collection_only::<CustomerView>().all().await?;
        Ok(all.last().cloned())
    }
}
