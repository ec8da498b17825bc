//! Device-initiated CUDA graph launch, made safe.
//!
//! A kernel launches a graph; if that launch fails, the host gets an `Err`, not silence
//! (`dl_fire_and_forget_one` runs `DL_FIRE_AND_FORGET(graph, slot)`, see below):
//!
//! ```no_run
//! use cuda_graph::{graph::Graph, kernel::LaunchConfig, DeviceBuffer, Stream};
//! use device_launch::{instantiate_for_device, ErrorSlot, Launcher};
//! let stream = Stream::new()?;
//! let counters = DeviceBuffer::<u32>::zeroed(1)?;
//! let work = Graph::new()?;
//! work.add_kernel(device_launch_kernels::dl_mark(), LaunchConfig::new(1, 1), (counters.ptr(), 0), &[])?;
//! let work = instantiate_for_device(&work)?.upload(&stream)?;
//! let slot = ErrorSlot::new()?;
//! let launcher = Launcher::new(
//!     device_launch_kernels::dl_fire_and_forget_one(),
//!     LaunchConfig::new(1, 1),
//!     (work.handle().arg(), slot.ptr()),
//! )?;
//! launcher.run(&stream, &slot)?;
//! assert_eq!(counters.to_vec()?, [1]);
//! # Ok::<(), device_launch::Error>(())
//! ```
//!
//! Kernels may launch graphs (fire-and-forget, tail, sibling, self-relaunch) and kernels
//! (CDP2) from the device. CUDA reports failures of those launches only to the device code
//! that made them, and the chapter's own programs ignore them, so their device launches can
//! silently never happen. This crate ships `device_launch.cuh`, whose launch helpers record
//! the first failure into an [`ErrorSlot`] that the host reads after synchronizing:
//!
//! ```cuda
//! #include <device_launch.cuh>
//! extern "C" __global__ void scheduler(unsigned long long graph, DlErrorSlot* slot) {
//!     DL_FIRE_AND_FORGET(graph, slot);
//! }
//! ```
//!
//! A build script finds the header through this crate's `links` metadata:
//!
//! ```no_run
//! // in build.rs's main(), with device-launch in [dependencies]:
//! cuda_build::KernelBuild::new()
//!     .include_from_dependency("DEVICE_LAUNCH")
//!     .compile("my_scheduler_kernels")
//!     .unwrap_or_else(|err| panic!("{err}"));
//! ```
//!
//! # From graph to device launch
//! 1. Build a [`Graph`](cuda_graph::graph::Graph) of kernel, memcpy and memset nodes only.
//!    [`instantiate_for_device`] checks that ([`validate`]) and names the first node CUDA
//!    would refuse, e.g. `node 3 is a host node (CUDA 13.0 refuses it with
//!    cudaErrorInvalidValue)`, then instantiates a [`DeviceGraphExec`] (device-launch flag).
//! 2. [`DeviceGraphExec::upload`] gives an [`UploadedGraphExec`], the only state with
//!    [`handle`](UploadedGraphExec::handle)s. A [`DeviceGraph<'_>`](DeviceGraph) borrows the
//!    exec; its [`arg`](DeviceGraph::arg) is the kernel argument ([`DeviceGraphArg`], a
//!    `cudaGraphExec_t` that keeps the exec alive). Several at once: [`DeviceGraphTable`].
//! 3. Run the launching kernel inside a graph: [`Launcher`] / [`launch_from_graph`]. On a
//!    plain stream it would not run at all ([`run_on_plain_stream`] explains the 801).
//! 4. Synchronize and read the [`ErrorSlot`]: [`Launcher::run`] does all three.
//! 5. [`UploadedGraphExec::update`] takes the exec back to not uploaded; it refuses while
//!    any `DeviceGraphArg` of it is alive ([`Error::HandlesOutstanding`], the one rule
//!    checked at run time; the others are compile errors).
//!
//! The launch modes (fire-and-forget, tail, sibling, self-relaunch), what runs when and the
//! limits, with an example each: [`modes`]. Scheduler building blocks: [`WorkQueue`]
//! (`dl_queue_pop`, `dl_queue_pop_warp`, `dl_queue_pop_block` on the device) and the
//! self-relaunching scheduler pattern in [`modes`].
//!
//! A fault of CUDA 13.0 (driver 580) itself is worked around in `cuda-graph`: dropped
//! device-launch execs are parked and reused instead of destroyed
//! ([`cuda_graph::graph::exec_pool_stats`]); the bug, its reproducer and the workaround are
//! explained once, in the docs of `cuda-graph/src/graph/exec_pool/mod.rs`.
//!
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

/// The crate README's examples, compiled as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

// Before the modules that use the macro it defines.
#[macro_use]
mod shared_struct;

mod cancel;
mod error;
mod error_slot;
mod exec;
#[cfg(test)]
mod header;
mod launcher;
pub mod limits;
pub mod modes;
mod queue;
mod table;
mod validate;

pub use cancel::{CancelFlag, RunningLoop};
pub use error::{Error, Result};
pub use error_slot::{DeviceLaunchError, ErrorSlot, Operation, RawErrorSlot};
pub use exec::{
    instantiate_for_device, take_drop_errors, DeviceGraph, DeviceGraphArg, DeviceGraphExec, ExecState,
    RawDeviceGraph, UpdateError, UploadedGraphExec,
};
pub use launcher::{launch_from_graph, run_on_plain_stream, Launcher};
pub use queue::{RawQueue, WorkQueue, WorkQueueArg, MAX_CAPACITY as MAX_QUEUE_CAPACITY};
pub use table::{DeviceGraphTable, DeviceGraphTableArg};
pub use validate::{validate, CHILD_GRAPH_NODES_ALLOWED, PROGRAMMATIC_EDGES_ALLOWED};

/// The folder holding `device_launch.cuh` (this crate's `include/`).
pub const INCLUDE_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/include");
