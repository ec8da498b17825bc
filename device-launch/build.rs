//! Publishes the folder of `device_launch.cuh` to crates that depend on this one: their build
//! scripts read it as `DEP_DEVICE_LAUNCH_INCLUDE` (`KernelBuild::include_from_dependency("DEVICE_LAUNCH")`).

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=include");
    let include = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("include");
    println!("cargo:include={}", include.display());
}
