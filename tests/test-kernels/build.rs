fn main() {
    cuda_build::KernelBuild::new().compile("test_kernels").unwrap_or_else(|e| panic!("\n{e}\n"));
}
