//! Misuses of typed kernels that must not compile: arguments of the wrong type or number,
//! a pointer to the wrong element type, host memory where device memory is declared, a
//! read-only pointer where the kernel writes, a kernel declared without `unsafe`, the raw
//! value of a conditional handle taken by safe code, mapped memory of a type the host cannot
//! read atomically, a programmatic edge from a node that is not a kernel, stream-launch-only
//! attributes on a kernel node, mapping a memory node into a clone (no clone holds one),
//! 2-D copies between buffers of different element types, a cubin or fatbin loaded without
//! `unsafe`, and NVRTC output made by hand (only NVRTC makes what loads safely).
//! The expected compiler output is in `tests/compile_fail/*.stderr`
//! (regenerate with `TRYBUILD=overwrite cargo test -p cuda-graph --test compile_fail`).

#[test]
fn compile_fail() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/compile_fail/*.rs");
}
