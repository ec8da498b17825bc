fn main() {
    cuda_build::KernelBuild::new().compile("llama_decode_kernels").unwrap_or_else(|e| panic!("\n{e}\n"));
}
