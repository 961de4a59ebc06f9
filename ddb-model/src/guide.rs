//! The README and the guide under `docs/`, compiled and run as doctests.
//!
//! Each chapter's `rust` code blocks are doctests of this crate, so `cargo test --workspace`
//! (or `cargo test -p ddb-model --doc guide`) runs them against the embedded engine and the
//! guide cannot drift from the code. The module exists only when rustdoc collects doctests
//! (`cfg(doctest)`): building or packaging the crate never reads the files outside it.

macro_rules! chapters {
    ($($name:ident = $path:literal),* $(,)?) => {
        $(
            #[doc = include_str!($path)]
            mod $name {}
        )*
    };
}

chapters! {
    readme = "../../README.md",
    keys = "../../docs/keys.md",
    queries = "../../docs/queries.md",
    writes = "../../docs/writes.md",
    trees = "../../docs/trees.md",
    edges = "../../docs/edges.md",
    adopting = "../../docs/adopting.md",
    lifecycle = "../../docs/lifecycle.md",
    data_rules = "../../docs/data-rules.md",
    operations = "../../docs/operations.md",
    requests = "../../docs/requests.md",
    tenants = "../../docs/tenants.md",
    aggregates = "../../docs/aggregates.md",
    rekeying = "../../docs/rekeying.md",
}

// The chapter's examples need the SDK (feature `encryption`).
#[cfg(feature = "encryption")]
#[doc = include_str!("../../docs/encryption.md")]
mod encryption {}

// The chapter's examples need the fault proxy (feature `testing`); each is also gated inside.
#[cfg(feature = "testing")]
#[doc = include_str!("../../docs/testing.md")]
mod testing {}
