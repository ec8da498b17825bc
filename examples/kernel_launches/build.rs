fn main() {
    cuda_build::KernelBuild::new().compile("kernel_launches_kernels").unwrap_or_else(|e| panic!("\n{e}\n"));
}
