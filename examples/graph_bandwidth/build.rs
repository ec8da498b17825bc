fn main() {
    cuda_build::KernelBuild::new().compile("graph_bandwidth_kernels").unwrap_or_else(|e| panic!("\n{e}\n"));
}
