//! The step kernel as PTX (what a cudarc user has: plain PTX, loaded at run time) and the
//! loop's condition kernel as a fatbin device-linked with the device runtime (it sets the
//! WHILE node's condition), both with their kernels' C++ types inside.

use cuda_build::{ImageBuild, ImageKind};

fn main() {
    ImageBuild::new("kernels/step.cu", ImageKind::Ptx)
        .compile("step")
        .unwrap_or_else(|err| panic!("\n{err}\n"));
    ImageBuild::new("kernels/condition.cu", ImageKind::Fatbin)
        .compile("condition")
        .unwrap_or_else(|err| panic!("\n{err}\n"));
}
