fn main() {
    cuda_build::KernelBuild::new()
        .compile("cuda_graphs_conditional_kernels")
        .unwrap_or_else(|e| panic!("\n{e}\n"));
}
