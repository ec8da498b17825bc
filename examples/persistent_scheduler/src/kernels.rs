//! The kernels of the persistent scheduler (kernels/scheduler.cu), declared for Rust.

use cuda_graph::DevicePtr;
use device_launch::{DeviceExecTableArg, RawErrorSlot, WorkQueueArg};

// SAFETY: each kernel below reads and writes its pointers only below the counts it is given
// (see kernels/*.cu); the declarations are private to this crate, whose launches pass counts
// no larger than the buffers they point into.
cuda_graph::kernels! {
    /// One item: the next entry of its kind's list, transformed, counted and reported done.
    pub(crate) unsafe fn ps_item(
        input: DevicePtr<u32>,
        output: DevicePtr<u32>,
        width: u32,
        rounds: u32,
        kind: u32,
        lists: DevicePtr<u32>,
        capacity: u32,
        counters: DevicePtr<u32>,
        hits: DevicePtr<u32>,
        queue: WorkQueueArg,
    );
    /// The persistent scheduler: claims a batch, launches one graph per item, relaunches
    /// itself while items remain.
    pub(crate) unsafe fn ps_scheduler(
        queue: WorkQueueArg,
        kinds: DevicePtr<u32>,
        lists: DevicePtr<u32>,
        capacity: u32,
        counters: DevicePtr<u32>,
        graphs: DeviceExecTableArg,
        replicas: u32,
        launch_threads: u32,
        slot: DevicePtr<RawErrorSlot>,
    );
}

/// The kernels declared here against their C++ parameter types (`check_types` needs no GPU:
/// it reads the signature functions cuda-build compiled next to the kernels).
#[cfg(test)]
mod kernel_declarations {
    use super::*;

    #[test]
    fn match_the_cpp_parameter_types() {
        chapter_common::assert_kernel_types! { ps_item, ps_scheduler }
    }
}
