//! Publishes the folders of `device_launch.cuh` and of the `cudadevrt_limits.cuh` it includes
//! (from `cudadevrt-sys`, the one home of the device-launch limits) to crates that depend on
//! this one: their build scripts read them, joined as in `PATH`, as `DEP_DEVICE_LAUNCH_INCLUDE`
//! (`KernelBuild::include_from_dependency("DEVICE_LAUNCH")`).

use std::path::{Path, PathBuf};

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=include");
    println!("cargo:rerun-if-env-changed=DEP_CUDADEVRT_INCLUDE");
    let own = Path::new(env!("CARGO_MANIFEST_DIR")).join("include");
    let limits = std::env::var_os("DEP_CUDADEVRT_INCLUDE")
        .map(PathBuf::from)
        .expect("cudadevrt-sys publishes DEP_CUDADEVRT_INCLUDE (the folder of cudadevrt_limits.cuh)");
    let joined = std::env::join_paths([own, limits]).expect("include folders without the path separator");
    println!("cargo:include={}", joined.to_string_lossy());
}
