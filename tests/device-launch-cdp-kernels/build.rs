fn main() {
    cuda_build::KernelBuild::new()
        .include_from_dependency("DEVICE_LAUNCH")
        .compile("device_launch_cdp_kernels")
        .unwrap_or_else(|err| panic!("\n{err}\n"));
}
