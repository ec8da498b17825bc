//! Compiles kernels/*.cu: the benchmark kernels (kernels.cu, with the Rust path's
//! device-launch kernels) and the C++ twin (twin.cu), with the same compiler and flags,
//! into one static library linked into the benchmark. device_launch.cuh comes from the
//! device-launch crate's `links` metadata (DEP_DEVICE_LAUNCH_INCLUDE).

fn main() {
    cuda_build::KernelBuild::new()
        .include_from_dependency("DEVICE_LAUNCH")
        .compile("cuda_graph_bench_kernels")
        .unwrap_or_else(|e| panic!("\n{e}\n"));
}
