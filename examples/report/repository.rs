//! The repository layer: single-item operations, queries at every level, indexes, pages,
//! filters, collections, batches, scans and transactions.

use std::cell::RefCell;

use ddb_model::prelude::*;
use ddb_model::{Item, item::item_size, local};
use futures_util::TryStreamExt;
use serde::{Deserialize, Serialize};

use crate::Scale;
use crate::measure::{Section, measure};

#[derive(Table)]
#[table(name = "report", pk = "pk", sk = "sk", gsi(name = "gsi1", pk = "gsi1pk", sk = "gsi1sk"))]
pub struct App;

/// A user, findable by organisation (and name) on gsi1.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = App, pk = "USER#<id>", sk = "PROFILE")]
#[index(gsi1, pk = "ORG#<org>", sk = "USER#<name>")]
pub struct User {
    id: String,
    org: String,
    name: String,
    email: String,
    logins: u64,
}

/// A user's orders, in the user's partition, sorted by year, month and number.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = App, pk = "USER#<user>", sk = "ORDER#<year>#<month>#<seq>")]
pub struct Order {
    user: String,
    year: u16,
    month: u8,
    seq: u32,
    total_cents: u64,
    status: String,
}

/// A projection of an order.
#[derive(Deserialize)]
pub struct OrderTotal {
    #[allow(dead_code)]
    total_cents: u64,
}

/// An account with optimistic locking.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = App, pk = "ACCOUNT#<id>", sk = "ACCOUNT", version = version)]
pub struct Account {
    id: String,
    balance: i64,
    version: u64,
}

/// Everything in a user's partition.
#[derive(Collection)]
pub enum UserItems {
    User(User),
    Order(Order),
}

const ORGS: usize = 4;
/// The user whose partition holds the orders.
const BUYER: &str = "u0000";

fn user(i: usize) -> User {
    User {
        id: format!("u{i:04}"),
        org: format!("org-{}", i % ORGS),
        name: format!("name-{i:04}"),
        email: format!("user{i}@example.com"),
        logins: 0,
    }
}

/// Order `i` of the buyer: three years, twelve months, totals from 0 to 999.99.
fn order(i: usize) -> Order {
    Order {
        user: BUYER.into(),
        year: 2022 + (i % 3) as u16,
        month: 1 + ((i / 3) % 12) as u8,
        seq: i as u32,
        total_cents: (i as u64 * 7919) % 100_000,
        status: if i.is_multiple_of(10) { "open".into() } else { "shipped".into() },
    }
}

fn kb(bytes: usize) -> String {
    format!("{:.0} KB", bytes as f64 / 1024.0)
}

/// `n` items per request at most: `⌈items / n⌉`.
fn chunks(items: usize, n: usize) -> u64 {
    items.div_ceil(n) as u64
}

pub async fn section(scale: &Scale) -> Result<Section, Error> {
    let db = local::isolated_db::<App>().await?;
    let db = &db;
    let users: &[User] = &(0..scale.users).map(user).collect::<Vec<_>>();
    let orders: Vec<Order> = (0..scale.orders).map(order).collect();
    let accounts: Vec<Account> =
        (0..2).map(|i| Account { id: format!("a{i}"), balance: 1_000_000, version: 0 }).collect();
    db.batch_put(users).put_all(&orders).await?;
    for a in &accounts {
        a.clone().create(db).await?;
    }
    // Sizes, for the minimum of each read: a Query or Scan returns at most 1 MB.
    let all_items: Vec<Item> = db.scan_items().all().await?;
    let table_bytes: usize = all_items.iter().map(item_size).sum();
    let order_bytes: usize = all_items
        .iter()
        .filter(|i| i.get("_type").and_then(|t| t.as_s().ok()).is_some_and(|t| t == "Order"))
        .map(item_size)
        .sum();
    let partition_bytes = order_bytes + table_bytes / all_items.len().max(1);
    let (n_users, n_orders) = (scale.users, scale.orders);

    let mut s = Section::new(
        "Repository layer",
        format!(
            "One table with one GSI: {n_users} users in {ORGS} organisations (gsi1 by \
             organisation and name); {n_orders} orders of one user in the user's partition, \
             sort key `ORDER#<year>#<month>#<seq>` (3 years, 12 months); 2 versioned \
             accounts. The table holds {} items, {}; the orders take {}. Single-item \
             operations run {} times, reads of many items {} times; numbers are per call.",
            all_items.len(),
            kb(table_bytes),
            kb(order_bytes),
            scale.single_runs,
            scale.many_runs,
        ),
    );
    let one = scale.single_runs;
    let many = scale.many_runs;
    let one_query = format!(
        "A Query returns at most 1 MB; the items it evaluates here take at most {} \
         (the whole partition), so one request.",
        kb(partition_bytes)
    );

    // ---------------------------------------------------------------------------------------
    // Single items
    // ---------------------------------------------------------------------------------------
    let id = |i: u32| format!("u{:04}", i as usize % n_users);
    let m = measure(db, one, |i| async move { Ok(User::get(db, id(i)).await?.map_or(0, |_| 1)) })
        .await?;
    s.push(m.row("get", "User::get(&db, id)", 1, "One item, one GetItem."));

    let m = measure(db, one, |i| async move {
        Ok(User::get(db, format!("missing-{i}")).await?.map_or(0, |_| 1))
    })
    .await?;
    s.push(m.row("get (no item)", "User::get(&db, \"missing\")", 1, "One GetItem answers it."));

    let m = measure(db, one, |i| async move {
        let mut u = user(n_users + i as usize);
        u.id = format!("new-{i}");
        u.create(db).await?;
        Ok(0)
    })
    .await?;
    s.push(m.row(
        "create",
        "user.create(&db)",
        1,
        "One PutItem whose condition (no item; otherwise the same entity type) is checked by \
         the service.",
    ));

    let m = measure(db, one, |i| async move {
        match users[i as usize % n_users].create(db).await {
            Err(e) if e.is_already_exists() => Ok(e.current::<User>().map_or(0, |_| 1)),
            Err(e) => Err(e),
            Ok(()) => Ok(0),
        }
    })
    .await?;
    s.push(m.row(
        "create (exists)",
        "user.create(&db) -> AlreadyExists",
        1,
        "The failed PutItem returns the stored item (`ReturnValuesOnConditionCheckFailure`), \
         so the error carries it without a second request.",
    ));

    let m = measure(db, one, |i| async move {
        users[i as usize % n_users].put(db).await?;
        Ok(0)
    })
    .await?;
    s.push(m.row("put", "user.put(&db)", 1, "One PutItem."));

    let current = RefCell::new(Account::get(db, "a0").await?.expect("account a0 was just written"));
    let current = &current;
    let m = measure(db, one, |i| async move {
        let mut a = current.borrow().clone();
        a.balance -= i64::from(i);
        a.replace(db).await?;
        *current.borrow_mut() = a;
        Ok(0)
    })
    .await?;
    s.push(m.row(
        "replace (versioned)",
        "account.replace(&db)",
        1,
        "One PutItem; the version check is part of its condition.",
    ));

    let m = measure(db, one, |i| async move {
        User::update(db, id(i)).set(User::EMAIL, format!("changed-{i}@example.com")).await?;
        Ok(1)
    })
    .await?;
    s.push(m.row(
        "update (set), returning the item",
        "User::update(&db, id).set(User::EMAIL, e)",
        1,
        "One UpdateItem; it returns the new item (`ReturnValues = ALL_NEW`).",
    ));

    let m = measure(db, one, |i| async move {
        User::update(db, id(i)).add(User::LOGINS, 1).no_return().await?;
        Ok(0)
    })
    .await?;
    s.push(m.row(
        "update (add), no return",
        "User::update(&db, id).add(User::LOGINS, 1).no_return()",
        1,
        "One TransactWriteItems with an idempotency token (a plain UpdateItem with ADD would \
         also be one request, but applies twice when the SDK retries after a lost response).",
    ));

    let m = measure(db, one, |i| async move {
        User::update(db, id(i)).add(User::LOGINS, 1).await?;
        Ok(1)
    })
    .await?;
    s.push(m.row_over(
        "update (add), returning the item",
        "User::update(&db, id).add(User::LOGINS, 1)",
        1,
        2,
        "The minimum is one UpdateItem returning ALL_NEW. ddb-model sends 2: the UpdateItem \
         returns ALL_NEW (this call's own result) and carries a per-call marker attribute, so \
         a retried request applies once and recognises its own applied write (see DESIGN.md \
         §8); a second UpdateItem removes the marker. `.no_return()` (row above) is one \
         TransactWriteItems with an idempotency token.",
    ));

    let m = measure(db, one, |i| async move {
        User::delete(db, format!("new-{i}")).await?;
        Ok(0)
    })
    .await?;
    s.push(m.row(
        "delete",
        "User::delete(&db, id)",
        1,
        "One DeleteItem (its condition refuses another entity type's item).",
    ));

    let m = measure(db, one, |i| async move {
        Ok(User::delete(db, id(i)).return_old().await?.map_or(0, |_| 1))
    })
    .await?;
    s.push(m.row(
        "delete, returning the old item",
        "User::delete(&db, id).return_old()",
        1,
        "One DeleteItem with `ReturnValues = ALL_OLD`.",
    ));
    // Put the deleted users back (not measured).
    db.batch_put(users).await?;

    // ---------------------------------------------------------------------------------------
    // Queries
    // ---------------------------------------------------------------------------------------
    let m =
        measure(db, many, |_| async move { Ok(Order::partition(db, BUYER).all().await?.len()) })
            .await?;
    s.push(m.row("query by partition", "Order::partition(&db, user)", 1, &one_query));

    let m = measure(db, many, |_| async move { Ok(Order::query(db, BUYER).all().await?.len()) })
        .await?;
    s.push(m.row(
        "query: every order (sort key `ORDER#...`)",
        "Order::query(&db, user)",
        1,
        &one_query,
    ));

    let m =
        measure(
            db,
            many,
            |_| async move { Ok(Order::query(db, BUYER).year(2023).all().await?.len()) },
        )
        .await?;
    s.push(m.row(
        "query: sort-key level 1 (year)",
        "Order::query(&db, user).year(y)",
        1,
        &one_query,
    ));

    let m = measure(db, many, |_| async move {
        Ok(Order::query(db, BUYER).year(2023).month(6).all().await?.len())
    })
    .await?;
    s.push(m.row("query: sort-key level 2 (month)", "….year(y).month(m)", 1, &one_query));

    let m = measure(db, many, |i| async move {
        let o = order(i as usize % n_orders);
        Ok(Order::query(db, BUYER).year(o.year).month(o.month).seq(o.seq).all().await?.len())
    })
    .await?;
    s.push(m.row(
        "query: sort-key level 3 (full key)",
        "….year(y).month(m).seq(n)",
        1,
        "A key condition on the full sort key: one request (a GetItem would be one too).",
    ));

    let m = measure(db, many, |_| async move {
        Ok(Order::query(db, BUYER).year(2023).month_between(4, 6).all().await?.len())
    })
    .await?;
    s.push(m.row(
        "query: range on a level",
        "….year(y).month_between(4, 6)",
        1,
        "BETWEEN on the sort key; one request (see the first query row).",
    ));

    let m = measure(db, many, |_| async move {
        Ok(Order::query(db, BUYER).reverse().limit(10).all().await?.len())
    })
    .await?;
    s.push(m.row(
        "query: newest 10",
        "Order::query(&db, user).reverse().limit(10)",
        1,
        "`Limit = 10` with `ScanIndexForward = false`: one request of 10 items.",
    ));

    let m = measure(db, many, |_| async move { Order::query(db, BUYER).year(2023).count().await })
        .await?;
    s.push(m.row(
        "query: count (items per call = the count)",
        "….year(y).count()",
        1,
        "`Select = COUNT`: one request, no items transferred.",
    ));

    let m =
        measure(db, many, |_| async move { Ok(User::query_gsi1(db, "org-1").all().await?.len()) })
            .await?;
    s.push(m.row(
        "GSI query by partition",
        "User::query_gsi1(&db, org)",
        1,
        "One Query on the index; an organisation's users take far less than 1 MB.",
    ));

    let m = measure(db, many, |i| async move {
        let u = user(1 + 4 * (i as usize % (n_users / ORGS).max(1)));
        Ok(User::query_gsi1(db, &u.org).name(&u.name).all().await?.len())
    })
    .await?;
    s.push(m.row(
        "GSI query, sort-key level 1",
        "User::query_gsi1(&db, org).name(n)",
        1,
        "One Query on the index.",
    ));

    let page = 100u32.min(n_orders as u32 / 2).max(1);
    let m = measure(db, many, |_| async move {
        Ok(Order::query(db, BUYER).limit(page as usize).page(None).await?.items.len())
    })
    .await?;
    s.push(m.row(
        &format!("paged query: first page of {page}"),
        &format!("Order::query(&db, user).limit({page}).page(None)"),
        1,
        "One request with `Limit`; the cursor of the next page comes with it.",
    ));

    let pages = chunks(n_orders, page as usize);
    let m = measure(db, many, |_| async move {
        let mut read = 0;
        let mut cursor = None;
        loop {
            let p = Order::query(db, BUYER).limit(page as usize).page(cursor.as_ref()).await?;
            read += p.items.len();
            match p.next {
                Some(next) => cursor = Some(next),
                None => return Ok(read),
            }
        }
    })
    .await?;
    let exact = n_orders % page as usize == 0;
    let why_pages = format!(
        "{n_orders} items in pages of {page}: {pages} pages{}",
        if exact {
            ", and one more request that finds nothing: when a page stops at `Limit` the \
             service returns `LastEvaluatedKey` without knowing whether more items follow, \
             so no client can tell the last full page from the others without asking again."
        } else {
            "; the last page is short, so the service returns no `LastEvaluatedKey` with it."
        }
    );
    s.push(m.row(
        &format!("paged query: every page of {page} through cursors"),
        "loop { ….limit(n).page(cursor) }",
        pages + u64::from(exact),
        &why_pages,
    ));

    let m = measure(db, many, |_| async move {
        Ok(Order::partition(db, BUYER)
            .page_size(page)
            .stream()
            .try_collect::<Vec<_>>()
            .await?
            .len())
    })
    .await?;
    s.push(m.row(
        &format!("stream, {page} items per request"),
        &format!("Order::partition(&db, user).page_size({page}).stream()"),
        pages + u64::from(exact),
        &why_pages,
    ));

    let m = measure(db, many, |_| async move {
        Ok(Order::partition(db, BUYER).filter(Order::TOTAL_CENTS.ge(90_000)).all().await?.len())
    })
    .await?;
    s.push(m.row(
        "filtered query",
        "Order::partition(&db, user).filter(Order::TOTAL_CENTS.ge(x))",
        1,
        "A filter is applied after the read: the request evaluates the whole partition \
         (under 1 MB, so one request) and returns the matching items.",
    ));

    let m = measure(db, many, |_| async move {
        Ok(Order::partition(db, BUYER).filter(Order::STATUS.eq("open")).limit(5).all().await?.len())
    })
    .await?;
    s.push(m.row(
        "filtered query, first 5 matches",
        "….filter(Order::STATUS.eq(\"open\")).limit(5)",
        1,
        "With a filter, a `Limit` of 5 would stop after 5 evaluated items, not 5 matches; \
         ddb-model asks for full pages and cuts the result, so one request finds them.",
    ));

    let m = measure(db, many, |_| async move {
        Ok(Order::partition(db, BUYER)
            .project::<OrderTotal>([Order::TOTAL_CENTS.path()])
            .all()
            .await?
            .len())
    })
    .await?;
    s.push(m.row(
        "projected query",
        "Order::partition(&db, user).project::<OrderTotal>([..])",
        1,
        &one_query,
    ));

    let m = measure(db, many, |_| async move {
        let items = User::partition(db, BUYER).collection::<UserItems>().all().await?;
        let mine = |item: &UserItems| match item {
            UserItems::User(u) => u.id == BUYER,
            UserItems::Order(o) => o.user == BUYER,
        };
        Ok(items.iter().filter(|i| mine(i)).count())
    })
    .await?;
    s.push(m.row(
        "collection query (user and orders)",
        "User::partition(&db, user).collection::<UserItems>()",
        1,
        &format!(
            "The user and its orders share the partition ({}): one Query reads both types.",
            kb(partition_bytes)
        ),
    ));

    // ---------------------------------------------------------------------------------------
    // Batches, scans, transactions
    // ---------------------------------------------------------------------------------------
    let mut sizes = vec![100usize.min(n_users), 250usize.min(n_users)];
    sizes.dedup();
    for n in sizes {
        let m = measure(db, many, |_| async move {
            let keys = (0..n).map(|i| User::key(format!("u{i:04}")));
            Ok(db.batch_get(keys).await?.into_iter().flatten().count())
        })
        .await?;
        s.push(m.row(
            &format!("batch get, {n} keys"),
            "db.batch_get(keys)",
            chunks(n, 100),
            &format!("BatchGetItem takes at most 100 keys: ⌈{n} / 100⌉ requests."),
        ));
    }

    let n = 250usize.min(n_users);
    let m = measure(db, many, |_| async move {
        db.batch_put(&users[..n]).await?;
        Ok(0)
    })
    .await?;
    s.push(m.row(
        &format!("batch write, {n} puts"),
        "db.batch_put(&users)",
        chunks(n, 25),
        &format!("BatchWriteItem takes at most 25 writes: ⌈{n} / 25⌉ requests."),
    ));

    let m = measure(db, many, |i| async move {
        db.batch_delete((0..n).map(|k| User::key(format!("gone-{i}-{k}")))).await?;
        Ok(0)
    })
    .await?;
    s.push(m.row(
        &format!("batch write, {n} deletes"),
        "db.batch_delete(keys)",
        chunks(n, 25),
        &format!("BatchWriteItem takes at most 25 writes: ⌈{n} / 25⌉ requests."),
    ));

    let m = measure(db, one.min(20), |_| async move { Ok(db.scan::<User>().all().await?.len()) })
        .await?;
    s.push(m.row(
        "scan (one entity type)",
        "db.scan::<User>()",
        chunks(table_bytes, 1 << 20).max(1),
        &format!(
            "A Scan reads at most 1 MB per request and the table holds {}: ⌈{} / 1 MB⌉ \
             requests. The entity-type filter does not reduce what is read.",
            kb(table_bytes),
            kb(table_bytes)
        ),
    ));

    let m = measure(db, one.min(20), |_| async move {
        Ok(db.scan::<User>().segments(4).all().await?.len())
    })
    .await?;
    s.push(m.row(
        "parallel scan, 4 segments",
        "db.scan::<User>().segments(4)",
        4.max(chunks(table_bytes, 1 << 20)),
        "Each segment needs at least one request, and each segment's part of the table is \
         under 1 MB.",
    ));

    let m = measure(db, one, |i| async move {
        let amount = i64::from(i % 7) + 1;
        db.transaction()
            .update(Account::key("a0"), |u| {
                u.add(Account::BALANCE, -amount).condition(Account::BALANCE.ge(amount))
            })
            .update(Account::key("a1"), |u| u.add(Account::BALANCE, amount))
            .await?;
        Ok(0)
    })
    .await?;
    s.push(m.row(
        "transaction: transfer between two items",
        "db.transaction().update(a, ..).update(b, ..)",
        1,
        "One TransactWriteItems holds both updates and the condition.",
    ));

    let m = measure(db, many, |i| async move {
        let batch: Vec<Order> =
            (0..25).map(|k| Order { seq: 1_000_000 + i * 100 + k, ..order(0) }).collect();
        let mut tx = db.transaction();
        for o in &batch {
            tx = tx.create(o);
        }
        tx.await?;
        Ok(0)
    })
    .await?;
    s.push(m.row(
        "transaction: 25 creates",
        "db.transaction().create(o1)….create(o25)",
        1,
        "Up to 100 actions fit one TransactWriteItems.",
    ));

    let m = measure(db, many, |_| async move {
        let mut read = db.transact_get();
        let slots: Vec<_> = (0..10).map(|k| read.get(User::key(format!("u{k:04}")))).collect();
        let out = read.await?;
        let mut found = 0;
        for slot in &slots {
            found += usize::from(out.get(slot)?.is_some());
        }
        Ok(found)
    })
    .await?;
    s.push(m.row(
        "transactional read of 10 items",
        "db.transact_get().get(k1)….get(k10)",
        1,
        "Up to 100 keys fit one TransactGetItems.",
    ));

    Ok(s)
}
