//! Compiles kernels/plain.cu into a PTX, a cubin and a fatbin, and kernels/conditional.cu
//! (which calls the device runtime) into a fatbin, each with its kernels' signatures.

use cuda_build::{ImageBuild, ImageKind};

fn main() {
    let images = [
        ("kernels/plain.cu", ImageKind::Ptx, "plain"),
        ("kernels/plain.cu", ImageKind::Cubin, "plain"),
        ("kernels/plain.cu", ImageKind::Fatbin, "plain"),
        ("kernels/conditional.cu", ImageKind::Fatbin, "conditional"),
    ];
    for (source, kind, name) in images {
        ImageBuild::new(source, kind).compile(name).unwrap_or_else(|err| panic!("\n{err}\n"));
    }
}
