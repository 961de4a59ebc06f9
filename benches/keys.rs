//! Key building and parsing, ddb-model against hand-written `format!` and `split` code.
//!
//!     cargo bench --bench keys
//!     benches/instructions.sh keys           # instruction counts under valgrind
//!
//! ddb-model escapes separators inside values (a value can never forge another key) and,
//! when parsing, unescapes them and rejects text that is not the canonical encoding of the
//! field's value; the hand-written side only checks the digits.

mod support;

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, criterion_group};
use ddb_model::{Error, Key};
use support::{DDB, HAND, Order, Small, hand_keys};

const GROUPS: [&str; 4] =
    ["key/build/simple", "key/build/composite", "key/parse/simple", "key/parse/composite"];

const ID: &str = "u-4711";
const USER: &str = "ann";
const YEAR: u16 = 2024;
const SEQ: u64 = 4242;

// The measured calls (see conversion.rs).

#[inline(never)]
fn counted_ddb_build_simple(id: &str) -> Key<Small> {
    Small::key(id)
}
#[inline(never)]
fn counted_hand_build_simple(id: &str) -> (String, String) {
    hand_keys::small(id)
}
#[inline(never)]
fn counted_ddb_build_composite(user: &str, year: u16, seq: u64) -> Key<Order> {
    Order::key(user, year, seq)
}
#[inline(never)]
fn counted_hand_build_composite(user: &str, year: u16, seq: u64) -> (String, String) {
    hand_keys::order(user, year, seq)
}
#[inline(never)]
fn counted_ddb_parse_simple(pk: &str, sk: &str) -> Result<(String,), Error> {
    Small::parse_key(pk, sk)
}
#[inline(never)]
fn counted_hand_parse_simple(pk: &str, sk: &str) -> Option<String> {
    hand_keys::parse_small(pk, sk)
}
#[inline(never)]
fn counted_ddb_parse_composite(pk: &str, sk: &str) -> Result<(String, u16, u64), Error> {
    Order::parse_key(pk, sk)
}
#[inline(never)]
fn counted_hand_parse_composite(pk: &str, sk: &str) -> Option<(String, u16, u64)> {
    hand_keys::parse_order(pk, sk)
}

/// The stored keys the parse benches read.
struct Stored {
    small: (String, String),
    order: (String, String),
}

fn stored() -> Stored {
    let parts = |pk: &str, sk: Option<&str>| (pk.to_owned(), sk.unwrap_or("").to_owned());
    let (small, order) = (Small::key(ID), Order::key(USER, YEAR, SEQ));
    Stored { small: parts(small.pk(), small.sk()), order: parts(order.pk(), order.sk()) }
}

fn run(group: &str, side: &str, k: &Stored) {
    let ((spk, ssk), (opk, osk)) = (&k.small, &k.order);
    match (group, side == DDB) {
        ("key/build/simple", true) => drop(black_box(counted_ddb_build_simple(black_box(ID)))),
        ("key/build/simple", false) => drop(black_box(counted_hand_build_simple(black_box(ID)))),
        ("key/build/composite", true) => drop(black_box(counted_ddb_build_composite(
            black_box(USER),
            black_box(YEAR),
            black_box(SEQ),
        ))),
        ("key/build/composite", false) => drop(black_box(counted_hand_build_composite(
            black_box(USER),
            black_box(YEAR),
            black_box(SEQ),
        ))),
        ("key/parse/simple", true) => {
            drop(black_box(counted_ddb_parse_simple(black_box(spk), black_box(ssk))))
        }
        ("key/parse/simple", false) => {
            drop(black_box(counted_hand_parse_simple(black_box(spk), black_box(ssk))))
        }
        ("key/parse/composite", true) => {
            drop(black_box(counted_ddb_parse_composite(black_box(opk), black_box(osk))))
        }
        ("key/parse/composite", false) => {
            drop(black_box(counted_hand_parse_composite(black_box(opk), black_box(osk))))
        }
        _ => panic!("no benchmark {group}/{side}"),
    }
}

fn keys(c: &mut Criterion) {
    let k = stored();
    // Both sides write the same keys and read back the same fields.
    assert_eq!(hand_keys::small(ID), k.small);
    assert_eq!(hand_keys::order(USER, YEAR, SEQ), k.order);
    assert_eq!(Small::parse_key(&k.small.0, &k.small.1).unwrap().0, ID);
    let fields = (USER.to_owned(), YEAR, SEQ);
    assert_eq!(Order::parse_key(&k.order.0, &k.order.1).unwrap(), fields);
    assert_eq!(hand_keys::parse_order(&k.order.0, &k.order.1), Some(fields));

    let ((spk, ssk), (opk, osk)) = (&k.small, &k.order);

    let mut g = c.benchmark_group(GROUPS[0]);
    g.bench_function(DDB, |i| i.iter(|| counted_ddb_build_simple(black_box(ID))));
    g.bench_function(HAND, |i| i.iter(|| counted_hand_build_simple(black_box(ID))));
    g.finish();

    let mut g = c.benchmark_group(GROUPS[1]);
    g.bench_function(DDB, |i| {
        i.iter(|| counted_ddb_build_composite(black_box(USER), black_box(YEAR), black_box(SEQ)))
    });
    g.bench_function(HAND, |i| {
        i.iter(|| counted_hand_build_composite(black_box(USER), black_box(YEAR), black_box(SEQ)))
    });
    g.finish();

    let mut g = c.benchmark_group(GROUPS[2]);
    g.bench_function(DDB, |i| i.iter(|| counted_ddb_parse_simple(black_box(spk), black_box(ssk))));
    g.bench_function(HAND, |i| {
        i.iter(|| counted_hand_parse_simple(black_box(spk), black_box(ssk)))
    });
    g.finish();

    let mut g = c.benchmark_group(GROUPS[3]);
    g.bench_function(DDB, |i| {
        i.iter(|| counted_ddb_parse_composite(black_box(opk), black_box(osk)))
    });
    g.bench_function(HAND, |i| {
        i.iter(|| counted_hand_parse_composite(black_box(opk), black_box(osk)))
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
    if let Some((group, side)) = support::counting(&GROUPS) {
        let k = stored();
        for _ in 0..support::COUNT_ITERATIONS {
            run(&group, &side, &k);
        }
        return;
    }
    let started = std::time::SystemTime::now();
    benches();
    Criterion::default().configure_from_args().final_summary();
    support::print_ratios(started, &GROUPS);
}
