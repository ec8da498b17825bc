// A kernel declaration is an `unsafe` promise (the kernel stays inside the memory it is
// given, for any arguments): one written without `unsafe` must not compile.
cuda_graph::kernels! {
    pub fn fill_pattern(out: cuda_graph::DevicePtr<u32>, n: u32, seed: u32);
}

fn main() {}
