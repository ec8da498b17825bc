//! CUDA kernels for the `device-launch` tests and docs, compiled from `kernels/*.cu` with
//! `device_launch.cuh` (found through the `device-launch` crate's `links` metadata) and
//! declared once here with `cuda_graph::kernels!`.
//!
//! Graph handles are declared as [`DeviceExecArg`] (one `cudaGraphExec_t`) and
//! [`DeviceExecTableArg`] (`const cudaGraphExec_t*`), so the execs they name stay alive
//! with the nodes that launch them; `DlErrorSlot*` is `DevicePtr<RawErrorSlot>` and
//! `DlQueue*` is [`WorkQueueArg`].
//!
//! Launchers must run inside a graph: use [`device_launch::Launcher`].
//!
//! ```no_run
//! use cuda_graph::{graph::Graph, kernel::LaunchConfig, DeviceBuffer, Stream};
//! use device_launch::{instantiate_for_device, DeviceExecTable, ErrorSlot, Launcher};
//! let stream = Stream::new()?;
//! let counters = DeviceBuffer::<u32>::zeroed(1)?;
//! let graph = Graph::new()?;
//! graph.add_kernel(device_launch_kernels::dl_mark(), LaunchConfig::new(1, 1), (counters.ptr(), 0), &[])?;
//! let work = instantiate_for_device(&graph)?.upload(&stream)?;
//! let table = DeviceExecTable::new(&[work.handle()])?;
//! let (slot, accepted) = (ErrorSlot::new()?, DeviceBuffer::<u32>::zeroed(1)?);
//! let launcher = Launcher::new(
//!     device_launch_kernels::dl_fire_and_forget_all(),
//!     LaunchConfig::new(1, 1),
//!     (table.arg(), 1, accepted.ptr(), slot.ptr()),
//! )?;
//! launcher.run(&stream, &slot)?;
//! assert_eq!(counters.to_vec()?, [1]);
//! # Ok::<(), device_launch::Error>(())
//! ```
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

use cuda_graph::{DeviceConstPtr, DevicePtr};
use device_launch::{DeviceExecArg, DeviceExecTableArg, RawErrorSlot, WorkQueueArg};

// kernels/launchers.cu: work for launched graphs.
// SAFETY: each kernel below reads and writes its pointers only below the counts it is given
// (see kernels/*.cu). They trust those counts: this unpublished crate serves the workspace's
// tests, which pass counts no larger than the buffers.
cuda_graph::kernels! {
    /// `dl_mark(uint32_t* counters, uint32_t index)`: `counters[index] += 1`, once per launch.
    pub unsafe fn dl_mark(counters: DevicePtr<u32>, index: u32);

    /// `dl_append(uint32_t* log, uint32_t capacity, uint32_t value, const uint32_t* flag)`:
    /// appends `(value, *flag)`; `log[0]` counts entries, entry `k` is at `log[1 + 2k]` and
    /// `log[2 + 2k]` (at most `capacity` entries, so `log` holds `1 + 2 * capacity`).
    pub unsafe fn dl_append(log: DevicePtr<u32>, capacity: u32, value: u32, flag: DevicePtr<u32>);

    /// `dl_wait_for_release(const uint32_t* release, uint32_t* counters, uint32_t index)`:
    /// spins until `*release != 0`, then `counters[index] += 1`: a graph that stays pending.
    pub unsafe fn dl_wait_for_release(release: DevicePtr<u32>, counters: DevicePtr<u32>, index: u32);
}

// kernels/launchers.cu: launchers.
// SAFETY: each kernel below reads and writes its pointers only below the counts it is given
// (see kernels/*.cu). They trust those counts: this unpublished crate serves the workspace's
// tests, which pass counts no larger than the buffers.
cuda_graph::kernels! {
    /// `dl_fire_and_forget_all(const cudaGraphExec_t* graphs, uint32_t n, uint32_t* accepted, DlErrorSlot* slot)`:
    /// fire-and-forgets `graphs[0..n)` in order, stops at the first refusal, then writes the
    /// number accepted.
    pub unsafe fn dl_fire_and_forget_all(
        graphs: DeviceExecTableArg,
        n: u32,
        accepted: DevicePtr<u32>,
        slot: DevicePtr<RawErrorSlot>,
    );

    /// `dl_tail_launch_all(...)`: like [`dl_fire_and_forget_all`] with tail launches (which
    /// run after the launcher's graph, in order, and so see `*accepted`).
    pub unsafe fn dl_tail_launch_all(
        graphs: DeviceExecTableArg,
        n: u32,
        accepted: DevicePtr<u32>,
        slot: DevicePtr<RawErrorSlot>,
    );

    /// `dl_sibling_launch_all(...)`: like [`dl_fire_and_forget_all`] with sibling launches.
    pub unsafe fn dl_sibling_launch_all(
        graphs: DeviceExecTableArg,
        n: u32,
        accepted: DevicePtr<u32>,
        slot: DevicePtr<RawErrorSlot>,
    );

    /// `dl_fire_and_forget_one(cudaGraphExec_t graph, DlErrorSlot* slot)`.
    pub unsafe fn dl_fire_and_forget_one(graph: DeviceExecArg, slot: DevicePtr<RawErrorSlot>);

    /// `dl_sibling_launch_one(cudaGraphExec_t graph, DlErrorSlot* slot)`.
    pub unsafe fn dl_sibling_launch_one(graph: DeviceExecArg, slot: DevicePtr<RawErrorSlot>);

    /// `dl_fire_and_forget_twice(cudaGraphExec_t graph, uint32_t* release, DlErrorSlot* slot)`:
    /// fire-and-forgets `graph` twice in a row (the second while the first is pending), then
    /// sets `*release = 1`.
    pub unsafe fn dl_fire_and_forget_twice(graph: DeviceExecArg, release: DevicePtr<u32>, slot: DevicePtr<RawErrorSlot>);

    /// `dl_fire_and_forget_past_limit(...)`: fire-and-forgets `graphs[0..min(n, 121))`
    /// without stopping, to exceed the 120 limit on purpose; writes the number accepted.
    pub unsafe fn dl_fire_and_forget_past_limit(
        graphs: DeviceExecTableArg,
        n: u32,
        accepted: DevicePtr<u32>,
        slot: DevicePtr<RawErrorSlot>,
    );

    /// `dl_tail_launch_past_limit(...)`: tail-launches `graphs[0..min(n, 256))` without
    /// stopping, to exceed the 255 limit on purpose; writes the number accepted.
    pub unsafe fn dl_tail_launch_past_limit(
        graphs: DeviceExecTableArg,
        n: u32,
        accepted: DevicePtr<u32>,
        slot: DevicePtr<RawErrorSlot>,
    );

    /// `dl_relaunch_until(uint32_t* steps, uint32_t limit, DlErrorSlot* slot)`: counts a
    /// step and relaunches its own graph (`DL_RELAUNCH_SELF`) until `limit` steps ran.
    pub unsafe fn dl_relaunch_until(steps: DevicePtr<u32>, limit: u32, slot: DevicePtr<RawErrorSlot>);

    /// `dl_relaunch_until_cancelled(uint32_t* steps, const uint32_t* cancel, DlErrorSlot* slot)`:
    /// counts a step and relaunches its own graph until the host sets `*cancel`
    /// (`device_launch::CancelFlag`).
    pub unsafe fn dl_relaunch_until_cancelled(steps: DevicePtr<u32>, cancel: DeviceConstPtr<u32>, slot: DevicePtr<RawErrorSlot>);
}

// kernels/queue.cu
// SAFETY: each kernel below reads and writes its pointers only below the counts it is given
// (see kernels/*.cu). They trust those counts: this unpublished crate serves the workspace's
// tests, which pass counts no larger than the buffers.
cuda_graph::kernels! {
    /// `dl_queue_consume(DlQueue* queue, uint32_t* hits, uint32_t mode)`: drains the queue,
    /// `hits[item] += 1` per item, then reports them done; mode 0 per thread, 1 per warp
    /// (block size a multiple of 32), 2 per block.
    pub unsafe fn dl_queue_consume(queue: WorkQueueArg, hits: DevicePtr<u32>, mode: u32);

    /// `dl_queue_scheduler(DlQueue* queue, const cudaGraphExec_t* graphs, uint32_t n, uint32_t* steps, DlErrorSlot* slot)`:
    /// one item per run: fire-and-forgets `graphs[item % n]`, counts the step, relaunches
    /// itself until the queue is drained. Launch with one thread, inside a graph.
    pub unsafe fn dl_queue_scheduler(
        queue: WorkQueueArg,
        graphs: DeviceExecTableArg,
        n: u32,
        steps: DevicePtr<u32>,
        slot: DevicePtr<RawErrorSlot>,
    );
}

/// The queue consumer's modes (`dl_queue_consume`'s `mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum QueueMode {
    /// `dl_queue_pop`: one atomic per item.
    PerThread = 0,
    /// `dl_queue_pop_warp`: one atomic per 32 items.
    PerWarp = 1,
    /// `dl_queue_pop_block`: one atomic per block-sized batch.
    PerBlock = 2,
}

// kernels/pdl.cu
// SAFETY: dl_pdl_count writes counters[index] only; the tests that launch it pass an index
// inside the buffer.
cuda_graph::kernels! {
    /// `dl_pdl_count(uint32_t* counters, uint32_t index)`: lets its dependents launch, waits
    /// for the kernels before it (`cuda_graph::pdl`), then `counters[index] += 1` without
    /// atomics: a chain joined by programmatic edges counts every node only if every wait holds.
    pub unsafe fn dl_pdl_count(counters: DevicePtr<u32>, index: u32);
}

/// The kernels declared in this file against their C++ parameter types (`check_types` needs
/// no GPU: it reads the signature functions cuda-build compiled next to the kernels).
#[cfg(test)]
mod kernel_declarations {
    #[test]
    fn match_the_cpp_parameter_types() {
        for (name, outcome) in [
            ("dl_mark", super::dl_mark().check_types()),
            ("dl_pdl_count", super::dl_pdl_count().check_types()),
            ("dl_append", super::dl_append().check_types()),
            ("dl_wait_for_release", super::dl_wait_for_release().check_types()),
            ("dl_fire_and_forget_all", super::dl_fire_and_forget_all().check_types()),
            ("dl_tail_launch_all", super::dl_tail_launch_all().check_types()),
            ("dl_sibling_launch_all", super::dl_sibling_launch_all().check_types()),
            ("dl_fire_and_forget_one", super::dl_fire_and_forget_one().check_types()),
            ("dl_sibling_launch_one", super::dl_sibling_launch_one().check_types()),
            ("dl_fire_and_forget_twice", super::dl_fire_and_forget_twice().check_types()),
            ("dl_fire_and_forget_past_limit", super::dl_fire_and_forget_past_limit().check_types()),
            ("dl_tail_launch_past_limit", super::dl_tail_launch_past_limit().check_types()),
            ("dl_relaunch_until", super::dl_relaunch_until().check_types()),
            ("dl_relaunch_until_cancelled", super::dl_relaunch_until_cancelled().check_types()),
            ("dl_queue_consume", super::dl_queue_consume().check_types()),
            ("dl_queue_scheduler", super::dl_queue_scheduler().check_types()),
        ] {
            assert_eq!(outcome, Ok(()), "{name}");
        }
    }
}
