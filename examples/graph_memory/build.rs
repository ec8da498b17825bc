fn main() {
    cuda_build::KernelBuild::new().compile("graph_memory_kernels").unwrap_or_else(|e| panic!("\n{e}\n"));
}
