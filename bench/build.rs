//! Compiles kernels/*.cu: the benchmark kernels (kernels.cu) and the C++ twin (twin.cu), with
//! the same compiler and flags, into one static library linked into the benchmark.

fn main() {
    cuda_build::KernelBuild::new().compile("cuda_graph_bench_kernels").unwrap_or_else(|e| panic!("\n{e}\n"));
}
