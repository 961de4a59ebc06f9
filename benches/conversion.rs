//! Item conversion both ways, ddb-model against hand-written serde_dynamo code, for a small
//! (5 fields) and a large (50 fields, nested) entity.
//!
//!     cargo bench --bench conversion
//!
//! ddb-model's `to_item` also escapes key values, checks key sizes, attribute collisions and
//! the item size; its `from_item` also checks that the stored keys are the keys of the fields
//! read. The hand-written side does neither (see BENCHMARKS.md).

mod support;

use std::hint::black_box;
use std::time::Duration;

use criterion::{BatchSize, Criterion, criterion_group};
use ddb_model::entity::{from_item, to_item};
use support::{DDB, HAND, hand_large, hand_small, large, small};

const GROUPS: [&str; 4] = ["to_item/small", "to_item/large", "from_item/small", "from_item/large"];

fn conversion(c: &mut Criterion) {
    let (s, l) = (small(), large());
    // Both sides produce the same item and read back the same value.
    assert_eq!(to_item(&s, None).unwrap(), hand_small::to_item(&s).unwrap());
    assert_eq!(to_item(&l, None).unwrap(), hand_large::to_item(&l).unwrap());
    let (small_item, large_item) = (to_item(&s, None).unwrap(), to_item(&l, None).unwrap());
    assert_eq!(from_item::<support::Small>(small_item.clone()).unwrap(), s);
    assert_eq!(hand_large::from_item(large_item.clone()).unwrap(), l);

    let mut g = c.benchmark_group("to_item/small");
    g.bench_function(DDB, |b| b.iter(|| to_item(black_box(&s), None).unwrap()));
    g.bench_function(HAND, |b| b.iter(|| hand_small::to_item(black_box(&s)).unwrap()));
    g.finish();

    let mut g = c.benchmark_group("to_item/large");
    g.bench_function(DDB, |b| b.iter(|| to_item(black_box(&l), None).unwrap()));
    g.bench_function(HAND, |b| b.iter(|| hand_large::to_item(black_box(&l)).unwrap()));
    g.finish();

    // The item is consumed: each iteration gets a clone made outside the timed part.
    let mut g = c.benchmark_group("from_item/small");
    g.bench_function(DDB, |b| {
        b.iter_batched(
            || small_item.clone(),
            |item| from_item::<support::Small>(item).unwrap(),
            BatchSize::SmallInput,
        )
    });
    g.bench_function(HAND, |b| {
        b.iter_batched(
            || small_item.clone(),
            |item| hand_small::from_item(item).unwrap(),
            BatchSize::SmallInput,
        )
    });
    g.finish();

    let mut g = c.benchmark_group("from_item/large");
    g.bench_function(DDB, |b| {
        b.iter_batched(
            || large_item.clone(),
            |item| from_item::<support::Large>(item).unwrap(),
            BatchSize::SmallInput,
        )
    });
    g.bench_function(HAND, |b| {
        b.iter_batched(
            || large_item.clone(),
            |item| hand_large::from_item(item).unwrap(),
            BatchSize::SmallInput,
        )
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
    let started = std::time::SystemTime::now();
    benches();
    Criterion::default().configure_from_args().final_summary();
    support::print_ratios(started, &GROUPS);
}
