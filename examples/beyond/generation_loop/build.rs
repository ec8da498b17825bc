fn main() {
    cuda_build::KernelBuild::new().compile("generation_loop_kernels").unwrap_or_else(|e| panic!("\n{e}\n"));
}
