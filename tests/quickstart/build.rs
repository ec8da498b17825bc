fn main() {
    // Compiles kernels/*.cu with nvcc; a failure shows nvcc's own messages.
    if let Err(err) = cuda_build::KernelBuild::new().compile("app_kernels") {
        panic!("{err}");
    }
}
