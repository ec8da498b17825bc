fn main() {
    cuda_build::KernelBuild::new()
        // chapter_common_work.cuh: the work several programs share.
        .include("../chapter-common/include")
        .compile("cuda_graphs_kernels")
        .unwrap_or_else(|e| panic!("\n{e}\n"));
}
