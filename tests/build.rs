fn main() {
    cuda_build::KernelBuild::new().compile("chapter_tests_kernels").unwrap_or_else(|err| panic!("\n{err}\n"));
}
