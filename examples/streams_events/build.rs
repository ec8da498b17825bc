fn main() {
    cuda_build::KernelBuild::new().compile("streams_events_kernels").unwrap_or_else(|e| panic!("\n{e}\n"));
}
