// Compiles this crate's kernels/*.cu; device_launch.cuh comes from the device-launch crate
// through its `links` metadata (DEP_DEVICE_LAUNCH_INCLUDE).
fn main() {
    cuda_build::KernelBuild::new()
        .include_from_dependency("DEVICE_LAUNCH")
        .compile("downstream_kernels")
        .unwrap_or_else(|err| panic!("\n{err}\n"));
}
