fn main() {
    cuda_build::KernelBuild::new().compile("atomic_work_queue_kernels").unwrap_or_else(|e| panic!("\n{e}\n"));
}
