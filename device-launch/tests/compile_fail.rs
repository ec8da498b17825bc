//! Misuses of the upload typestate that must not compile: a handle before upload, a handle
//! used after update, an exec dropped while a handle lives, a handle from a host-launch exec,
//! a borrowed handle passed to a kernel without `arg()`, an exec moved out of its owner
//! (`mem::replace` on the inner `GraphExec`), and a raw exec handle taken without `unsafe`.
//! The expected compiler output is in `tests/compile_fail/*.stderr`
//! (regenerate with `TRYBUILD=overwrite cargo test -p device-launch --test compile_fail`).

#[test]
fn compile_fail() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/compile_fail/*.rs");
}
