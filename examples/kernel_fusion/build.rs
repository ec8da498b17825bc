fn main() {
    cuda_build::KernelBuild::new().compile("kernel_fusion_kernels").unwrap_or_else(|e| panic!("\n{e}\n"));
}
