//! Compile-time errors of the derives: one case per mistake in tests/ui/, each with the
//! compiler output it must produce checked in next to it (`TRYBUILD=overwrite` regenerates).
//! `UI_CASES=tests/ui/query_*.rs` runs a subset while iterating.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    let cases = std::env::var("UI_CASES").unwrap_or_else(|_| "tests/ui/*.rs".to_owned());
    t.compile_fail(cases);
}
