//! Generated ids (`#[generated(uuid7)]`, `#[generated(ulid)]`): `create` and `put` through
//! `&mut` fill in an unset id field before rendering the keys it is part of, keep it in the
//! value, and never overwrite a given one; ids made in sequence sort in creation order as
//! key text; a write that cannot fill the value in refuses an unset id before sending.

use ddb_model::DefaultTable;
use ddb_model::error::RequestProblem;
use ddb_model::prelude::*;
use ddb_model::uuid::Uuid;
use serde::{Deserialize, Serialize};

use crate::support;

#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(pk = "CUST#<customer>", sk = "ORDER#<id>")]
struct Order {
    customer: String,
    #[generated(uuid7)]
    id: String,
    total: u32,
}

#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(pk = "LOG#<stream>", sk = "EVENT#<id>")]
#[index(gsi1, pk = "REQ#<request>", sk = "LOG")]
struct Event {
    stream: String,
    #[generated(ulid)]
    id: String,
    #[generated(uuid7)]
    request: Option<String>,
    #[generated(uuid7)]
    trace: Uuid,
}

fn order(total: u32) -> Order {
    Order { customer: "c".into(), id: String::new(), total }
}

#[tokio::test]
async fn create_and_put_fill_in_unset_ids_and_keep_given_ones() -> Result<(), Error> {
    let db = support::db::<DefaultTable>().await;
    let mut first = order(1);
    first.create(&db).await?;
    assert_eq!(first.id.len(), 36, "{}", first.id);
    assert_eq!(Uuid::parse_str(&first.id).map(|u| u.get_version_num()), Ok(7));
    assert_eq!(first.key().sk(), Some(format!("ORDER#{}", first.id).as_str()));
    assert_eq!(Order::get(&db, "c", &first.id).await?, Some(first.clone()));

    // A given id is kept, by create and by put.
    let mut given = Order { id: "mine".into(), ..order(2) };
    given.create(&db).await?;
    assert_eq!(given.id, "mine");
    given.total = 3;
    given.put(&db).await?;
    assert_eq!(Order::get(&db, "c", "mine").await?.map(|o| o.total), Some(3));
    // put generates too, and `Db::create` through `&mut`.
    let mut put = order(4);
    put.put(&db).await?;
    assert!(!put.id.is_empty() && put.id != first.id);
    let mut via_db = order(5);
    db.create(&mut via_db).await?;
    assert!(Order::get(&db, "c", &via_db.id).await?.is_some());

    // ULID text, an `Option<String>` and a `Uuid`, in keys and in an index key.
    let mut event =
        Event { stream: "s".into(), id: String::new(), request: None, trace: Uuid::nil() };
    event.create(&db).await?;
    assert_eq!(event.id.len(), 26, "{}", event.id);
    assert!(event.id.bytes().all(|b| b"0123456789ABCDEFGHJKMNPQRSTVWXYZ".contains(&b)));
    let request = event.request.clone().expect("generated");
    assert_eq!(event.trace.get_version_num(), 7);
    let by_request = Event::query_gsi1(&db, &request).all().await?;
    assert_eq!(by_request, [event.clone()]);
    Ok(())
}

#[tokio::test]
async fn writes_that_cannot_fill_the_value_in_refuse_an_unset_id() -> Result<(), Error> {
    let db = support::db::<DefaultTable>().await;
    let unset = order(1);
    db.reset_requests();
    let not_generated = |e: &Error| matches!(e, Error::InvalidRequest { path, problem: RequestProblem::IdNotGenerated { entity: "Order" } } if path == "id");
    let errs = [
        db.create(&unset).await.unwrap_err(),
        db.put(&unset).await.unwrap_err(),
        unset.clone().replace(&db).await.unwrap_err(),
        db.batch_write().put(&unset).await.unwrap_err(),
        db.transaction().create(&unset).await.unwrap_err(),
    ];
    for err in &errs {
        let inner = match err {
            Error::InvalidAction { source, .. } => source,
            other => other,
        };
        assert!(not_generated(inner) && err.is_invalid_input(), "{err}");
    }
    assert_eq!(db.requests().total(), 0, "nothing sent: {}", db.requests());

    // Filled in by hand, the same writes go through.
    let (mut a, mut b) = (order(1), order(2));
    a.generate_ids();
    b.generate_ids();
    assert!(a.id < b.id, "{} {}", a.id, b.id);
    let given = a.id.clone();
    a.generate_ids();
    assert_eq!(a.id, given, "a given id is never replaced");
    db.batch_write().put(&a).await?;
    db.transaction().create(&b).await?;
    assert_eq!(Order::query(&db, "c").all().await?, [a, b]);
    Ok(())
}

#[tokio::test]
async fn ids_created_in_sequence_query_back_in_creation_order() -> Result<(), Error> {
    let db = support::db::<DefaultTable>().await;
    let mut created: Vec<Order> = Vec::new();
    let mut events: Vec<Event> = Vec::new();
    for total in 0..150 {
        let mut o = order(total);
        o.create(&db).await?;
        created.push(o);
        let mut e =
            Event { stream: "s".into(), id: String::new(), request: None, trace: Uuid::nil() };
        e.create(&db).await?;
        events.push(e);
    }
    // Ids made within one millisecond too (no request between them).
    let burst: Vec<Order> = (150..400)
        .map(|total| {
            let mut o = order(total);
            o.generate_ids();
            o
        })
        .collect();
    let millis = |o: &Order| Uuid::parse_str(&o.id).ok().map(|u| u.as_u128() >> 80);
    assert!(
        burst.windows(2).any(|w| millis(&w[0]) == millis(&w[1])),
        "several ids within one millisecond"
    );
    for chunk in burst.chunks(25) {
        let mut batch = db.batch_write();
        for o in chunk {
            batch = batch.put(o);
        }
        batch.await?;
    }
    created.extend(burst);
    let read = Order::query(&db, "c").all().await?;
    assert_eq!(read.iter().map(|o| o.total).collect::<Vec<_>>(), (0..400).collect::<Vec<_>>());
    assert_eq!(read, created);
    let read = Event::query(&db, "s").all().await?;
    assert_eq!(read, events);
    Ok(())
}
