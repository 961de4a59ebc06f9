//! Item conversion both ways, ddb-model against hand-written serde_dynamo code, for a small
//! (5 fields) and a large (50 fields, nested) entity.
//!
//!     cargo bench --bench conversion
//!     benches/instructions.sh conversion     # instruction counts under valgrind
//!
//! ddb-model's `to_item` also escapes key values, checks key sizes, attribute collisions and
//! the item size; its `from_item` also checks that the stored keys are the keys of the fields
//! read. The hand-written side does neither (see BENCHMARKS.md).

mod support;

use std::hint::black_box;
use std::time::Duration;

use criterion::{BatchSize, Criterion, criterion_group};
use ddb_model::Item;
use ddb_model::entity::{from_item, to_item};
use support::{DDB, HAND, Large, Small, hand_large, hand_small, large, small};

const GROUPS: [&str; 4] = ["to_item/small", "to_item/large", "from_item/small", "from_item/large"];

// The measured calls. Criterion times them; `benches/instructions.sh` counts the instructions
// executed inside them (valgrind collects only inside functions named `counted_*`).

#[inline(never)]
fn counted_ddb_to_item_small(e: &Small) -> Item {
    to_item(e, None).unwrap()
}
#[inline(never)]
fn counted_hand_to_item_small(e: &Small) -> Item {
    hand_small::to_item(e).unwrap()
}
#[inline(never)]
fn counted_ddb_to_item_large(e: &Large) -> Item {
    to_item(e, None).unwrap()
}
#[inline(never)]
fn counted_hand_to_item_large(e: &Large) -> Item {
    hand_large::to_item(e).unwrap()
}
#[inline(never)]
fn counted_ddb_from_item_small(item: Item) -> Small {
    from_item(item).unwrap()
}
#[inline(never)]
fn counted_hand_from_item_small(item: Item) -> Small {
    hand_small::from_item(item).unwrap()
}
#[inline(never)]
fn counted_ddb_from_item_large(item: Item) -> Large {
    from_item(item).unwrap()
}
#[inline(never)]
fn counted_hand_from_item_large(item: Item) -> Large {
    hand_large::from_item(item).unwrap()
}

/// Runs `group`/`side` once on prepared inputs (an item to read is cloned outside the
/// measured call).
fn run(group: &str, side: &str, s: &Small, l: &Large, small_item: &Item, large_item: &Item) {
    match (group, side == DDB) {
        ("to_item/small", true) => drop(black_box(counted_ddb_to_item_small(black_box(s)))),
        ("to_item/small", false) => drop(black_box(counted_hand_to_item_small(black_box(s)))),
        ("to_item/large", true) => drop(black_box(counted_ddb_to_item_large(black_box(l)))),
        ("to_item/large", false) => drop(black_box(counted_hand_to_item_large(black_box(l)))),
        ("from_item/small", true) => {
            drop(black_box(counted_ddb_from_item_small(small_item.clone())))
        }
        ("from_item/small", false) => {
            drop(black_box(counted_hand_from_item_small(small_item.clone())))
        }
        ("from_item/large", true) => {
            drop(black_box(counted_ddb_from_item_large(large_item.clone())))
        }
        ("from_item/large", false) => {
            drop(black_box(counted_hand_from_item_large(large_item.clone())))
        }
        _ => panic!("no benchmark {group}/{side}"),
    }
}

fn conversion(c: &mut Criterion) {
    let (s, l) = (small(), large());
    // Both sides produce the same item and read back the same value.
    assert_eq!(to_item(&s, None).unwrap(), hand_small::to_item(&s).unwrap());
    assert_eq!(to_item(&l, None).unwrap(), hand_large::to_item(&l).unwrap());
    let (small_item, large_item) = (to_item(&s, None).unwrap(), to_item(&l, None).unwrap());
    assert_eq!(from_item::<Small>(small_item.clone()).unwrap(), s);
    assert_eq!(hand_large::from_item(large_item.clone()).unwrap(), l);

    let mut g = c.benchmark_group("to_item/small");
    g.bench_function(DDB, |b| b.iter(|| counted_ddb_to_item_small(black_box(&s))));
    g.bench_function(HAND, |b| b.iter(|| counted_hand_to_item_small(black_box(&s))));
    g.finish();

    let mut g = c.benchmark_group("to_item/large");
    g.bench_function(DDB, |b| b.iter(|| counted_ddb_to_item_large(black_box(&l))));
    g.bench_function(HAND, |b| b.iter(|| counted_hand_to_item_large(black_box(&l))));
    g.finish();

    // The item is consumed: each iteration gets a clone made outside the timed part.
    let small_clone = || small_item.clone();
    let mut g = c.benchmark_group("from_item/small");
    g.bench_function(DDB, |b| {
        b.iter_batched(small_clone, counted_ddb_from_item_small, BatchSize::SmallInput)
    });
    g.bench_function(HAND, |b| {
        b.iter_batched(small_clone, counted_hand_from_item_small, BatchSize::SmallInput)
    });
    g.finish();

    let large_clone = || large_item.clone();
    let mut g = c.benchmark_group("from_item/large");
    g.bench_function(DDB, |b| {
        b.iter_batched(large_clone, counted_ddb_from_item_large, BatchSize::SmallInput)
    });
    g.bench_function(HAND, |b| {
        b.iter_batched(large_clone, counted_hand_from_item_large, BatchSize::SmallInput)
    });
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    targets = conversion
}

fn main() {
    if let Some((group, side)) = support::counting(&GROUPS) {
        let (s, l) = (small(), large());
        let (si, li) = (to_item(&s, None).unwrap(), to_item(&l, None).unwrap());
        for _ in 0..support::COUNT_ITERATIONS {
            run(&group, &side, &s, &l, &si, &li);
        }
        return;
    }
    let started = std::time::SystemTime::now();
    benches();
    Criterion::default().configure_from_args().final_summary();
    support::print_ratios(started, &GROUPS);
}
