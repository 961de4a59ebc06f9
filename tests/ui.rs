//! Compile-time errors of the derives: one case per mistake in tests/ui/, each with the
//! compiler output it must produce checked in next to it (`TRYBUILD=overwrite` regenerates).

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}
