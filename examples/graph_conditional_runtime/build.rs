fn main() {
    cuda_build::KernelBuild::new()
        .compile("graph_conditional_runtime_kernels")
        .unwrap_or_else(|e| panic!("\n{e}\n"));
}
