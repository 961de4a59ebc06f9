//! Compile-time errors of the derives: one case per mistake in tests/ui/, each with the
//! compiler output it must produce checked in next to it (`TRYBUILD=overwrite` regenerates).
//! Run by the package `ui/` (whose `tests` links here; its own dependencies: see
//! `ui/Cargo.toml`): `UI_CASES="tests/ui/query_*.rs" cargo test -p ddb-model-ui` runs a
//! subset.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    let cases = std::env::var("UI_CASES").unwrap_or_else(|_| "tests/ui/*.rs".to_owned());
    t.compile_fail(cases);
}
