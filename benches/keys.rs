//! Key building and parsing, ddb-model against hand-written `format!` and `split` code.
//!
//!     cargo bench --bench keys
//!
//! ddb-model escapes separators inside values (a value can never forge another key) and,
//! when parsing, rejects text that is not the canonical encoding of the field's value; the
//! hand-written side only checks the digits.

mod support;

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, criterion_group};
use support::{DDB, HAND, Order, Small, hand_keys};

const GROUPS: [&str; 4] =
    ["key/build/simple", "key/build/composite", "key/parse/simple", "key/parse/composite"];

fn keys(c: &mut Criterion) {
    let (id, user, year, seq) = ("u-4711", "ann", 2024u16, 4242u64);
    let small = Small::key(id);
    let order = Order::key(user, year, seq);
    let (small_pk, small_sk) = (small.pk().to_owned(), small.sk().unwrap_or("").to_owned());
    let (order_pk, order_sk) = (order.pk().to_owned(), order.sk().unwrap_or("").to_owned());
    // Both sides write the same keys and read back the same fields.
    assert_eq!(hand_keys::small(id), (small_pk.clone(), small_sk.clone()));
    assert_eq!(hand_keys::order(user, year, seq), (order_pk.clone(), order_sk.clone()));
    assert_eq!(Small::parse_key(&small_pk, &small_sk).unwrap().0, id);
    assert_eq!(Order::parse_key(&order_pk, &order_sk).unwrap(), (user.to_owned(), year, seq));
    assert_eq!(hand_keys::parse_order(&order_pk, &order_sk), Some((user.to_owned(), year, seq)));

    let mut g = c.benchmark_group("key/build/simple");
    g.bench_function(DDB, |b| b.iter(|| Small::key(black_box(id))));
    g.bench_function(HAND, |b| b.iter(|| hand_keys::small(black_box(id))));
    g.finish();

    let mut g = c.benchmark_group("key/build/composite");
    g.bench_function(DDB, |b| {
        b.iter(|| Order::key(black_box(user), black_box(year), black_box(seq)))
    });
    g.bench_function(HAND, |b| {
        b.iter(|| hand_keys::order(black_box(user), black_box(year), black_box(seq)))
    });
    g.finish();

    let mut g = c.benchmark_group("key/parse/simple");
    g.bench_function(DDB, |b| {
        b.iter(|| Small::parse_key(black_box(&small_pk), black_box(&small_sk)).unwrap())
    });
    g.bench_function(HAND, |b| {
        b.iter(|| hand_keys::parse_small(black_box(&small_pk), black_box(&small_sk)).unwrap())
    });
    g.finish();

    let mut g = c.benchmark_group("key/parse/composite");
    g.bench_function(DDB, |b| {
        b.iter(|| Order::parse_key(black_box(&order_pk), black_box(&order_sk)).unwrap())
    });
    g.bench_function(HAND, |b| {
        b.iter(|| hand_keys::parse_order(black_box(&order_pk), black_box(&order_sk)).unwrap())
    });
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    targets = keys
}

fn main() {
    let started = std::time::SystemTime::now();
    benches();
    Criterion::default().configure_from_args().final_summary();
    support::print_ratios(started, &GROUPS);
}
