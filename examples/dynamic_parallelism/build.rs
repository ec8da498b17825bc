//! Compiles kernels/*.cu with device_launch.cuh on the include path (published by the
//! device-launch crate's `links` metadata as DEP_DEVICE_LAUNCH_INCLUDE).

fn main() {
    cuda_build::KernelBuild::new()
        .include_from_dependency("DEVICE_LAUNCH")
        .compile("dynamic_parallelism_kernels")
        .unwrap_or_else(|e| panic!("\n{e}\n"));
}
