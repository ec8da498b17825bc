fn main() {
    cuda_build::KernelBuild::new().compile("multi_gpu_solve_kernels").unwrap_or_else(|e| panic!("\n{e}\n"));
}
