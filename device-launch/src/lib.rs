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
//! extern "C" __global__ void scheduler(cudaGraphExec_t graph, DlErrorSlot* slot) {
//!     DL_FIRE_AND_FORGET(graph, slot);
//! }
//! ```
//!
//! In Rust the kernel is declared with the graph as a [`DeviceExecArg`] (a `cudaGraphExec_t`;
//! the types are checked against the C++ ones at first use):
//!
//! ```no_run
//! use cuda_graph::DevicePtr;
//! use device_launch::{DeviceExecArg, RawErrorSlot};
//! cuda_graph::kernels! {
//!     // SAFETY: scheduler touches only the slot it is given.
//!     unsafe fn scheduler(graph: DeviceExecArg, slot: DevicePtr<RawErrorSlot>);
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
//!    cudaErrorInvalidValue)`, then instantiates a [`DeviceExec<NotUploaded>`](DeviceExec)
//!    (device-launch flag), which kernels may not launch yet.
//! 2. [`upload`](DeviceExec::upload) gives a `DeviceExec<`[`Uploaded`]`>`, the only state with
//!    [`handle`](DeviceExec::handle)s (asking a not-uploaded exec for one does not compile,
//!    and the compiler says to call `upload` first). A [`DeviceExecHandle<'_>`](DeviceExecHandle)
//!    borrows the exec; its [`arg`](DeviceExecHandle::arg) is the kernel argument
//!    ([`DeviceExecArg`], a `cudaGraphExec_t` that keeps the exec alive). Several at once:
//!    [`DeviceExecTable`].
//! 3. Run the launching kernel inside a graph: [`Launcher`] / [`launch_from_graph`]. On a
//!    plain stream it would not run at all ([`run_on_plain_stream`] explains the 801).
//! 4. Synchronize and read the [`ErrorSlot`]: [`Launcher::run`] does all three.
//! 5. [`DeviceExec::<Uploaded>::update`] takes the exec back to not uploaded; it refuses while
//!    any `DeviceExecArg` of it is alive ([`Error::HandlesOutstanding`], the one rule
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
mod node_rules;
mod queue;
mod table;
mod validate;

pub use cancel::{CancelFlag, RunningLoop};
pub use error::{Error, Result};
pub use error_slot::{DeviceLaunchError, ErrorSlot, Operation, RawErrorSlot};
pub use exec::{
    instantiate_for_device, DeviceExec, DeviceExecArg, DeviceExecHandle, ExecState, Launchable, NotUploaded,
    RawDeviceExec, UpdateError, UploadState, Uploaded,
};
pub use launcher::{launch_from_graph, run_on_plain_stream, Launcher};
pub use node_rules::{CHILD_GRAPH_NODES_ALLOWED, PROGRAMMATIC_EDGES_ALLOWED};
pub use queue::{RawQueue, WorkQueue, WorkQueueArg, MAX_CAPACITY as MAX_QUEUE_CAPACITY};
pub use table::{DeviceExecTable, DeviceExecTableArg};
pub use validate::validate;

// The names before the upload typestate became one generic type, kept so that code
// written against them still builds, with a warning naming the new one.
/// Renamed [`DeviceExec<NotUploaded>`](DeviceExec).
#[doc(hidden)]
#[deprecated(
    note = "renamed `DeviceExec<NotUploaded>`; `upload` gives the `DeviceExec<Uploaded>` kernels launch"
)]
pub type DeviceGraphExec = DeviceExec<NotUploaded>;
/// Renamed [`DeviceExec<Uploaded>`](DeviceExec).
#[doc(hidden)]
#[deprecated(note = "renamed `DeviceExec<Uploaded>`")]
pub type UploadedGraphExec = DeviceExec<Uploaded>;
/// Renamed [`DeviceExecHandle`].
#[doc(hidden)]
#[deprecated(note = "renamed `DeviceExecHandle`")]
pub type DeviceGraph<'a> = DeviceExecHandle<'a>;
/// Renamed [`DeviceExecArg`].
#[doc(hidden)]
#[deprecated(note = "renamed `DeviceExecArg`")]
pub type DeviceGraphArg = DeviceExecArg;
/// Renamed [`RawDeviceExec`].
#[doc(hidden)]
#[deprecated(note = "renamed `RawDeviceExec`")]
pub type RawDeviceGraph = RawDeviceExec;
/// Renamed [`DeviceExecTable`].
#[doc(hidden)]
#[deprecated(note = "renamed `DeviceExecTable`")]
pub type DeviceGraphTable = DeviceExecTable;
/// Renamed [`DeviceExecTableArg`].
#[doc(hidden)]
#[deprecated(note = "renamed `DeviceExecTableArg`")]
pub type DeviceGraphTableArg = DeviceExecTableArg;

/// The folder holding `device_launch.cuh` (this crate's `include/`).
pub const INCLUDE_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/include");

#[cfg(test)]
mod old_names {
    /// The deprecated names still name the new types.
    #[test]
    #[allow(deprecated)]
    fn are_the_new_types() {
        use crate::*;
        use std::any::TypeId;
        assert_eq!(TypeId::of::<DeviceGraphExec>(), TypeId::of::<DeviceExec<NotUploaded>>());
        assert_eq!(TypeId::of::<UploadedGraphExec>(), TypeId::of::<DeviceExec<Uploaded>>());
        assert_eq!(TypeId::of::<DeviceGraph<'static>>(), TypeId::of::<DeviceExecHandle<'static>>());
        assert_eq!(TypeId::of::<DeviceGraphArg>(), TypeId::of::<DeviceExecArg>());
        assert_eq!(TypeId::of::<RawDeviceGraph>(), TypeId::of::<RawDeviceExec>());
        assert_eq!(TypeId::of::<DeviceGraphTable>(), TypeId::of::<DeviceExecTable>());
        assert_eq!(TypeId::of::<DeviceGraphTableArg>(), TypeId::of::<DeviceExecTableArg>());
    }
}
