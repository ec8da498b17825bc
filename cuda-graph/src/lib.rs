#![doc = include_str!("../README.md")]
//!
//! # Ownership
//! Graphs and execs own what their nodes point to: a node that reads a [`DeviceBuffer`]
//! (through a [`DevicePtr`] kernel argument, a memcpy or a memset) keeps a shared handle to
//! that allocation, so the memory lives until every graph and exec using it is dropped.
//! Graphs and execs therefore carry no lifetime and can be stored anywhere, and no exec can
//! ever run on freed memory. Raw addresses enter only through `unsafe`
//! ([`DevicePtr::from_raw`]), whose caller promises the same.
//!
//! One exception to "dropped means destroyed": a dropped `GraphExec<DeviceLaunch>` is kept
//! for reuse by the next instantiation of a graph of the same shape (see
//! [`graph::exec_pool_stats`]), because destroying execs that kernels launched breaks later
//! device launches on CUDA 13.0. What its nodes pointed to is still released.
//!
//! # Errors
//! Every fallible call returns [`Result`], whose error [`CudaError`] names the CUDA call and
//! status, or the problem found before calling CUDA: a [`Refusal`] that says why, with the
//! devices and sizes involved, to match on ([`CudaError::refusal`]). Destructors never panic
//! and host functions never unwind into CUDA; errors they meet are kept for
//! [`take_unreported_errors`].
//!
//! ```no_run
//! use cuda_graph::{Device, DeviceBuffer, Stream};
//! Device::get(0)?.set_current()?;
//! let stream = Stream::new()?;
//! let data = DeviceBuffer::from_slice(&[1u32, 2, 3])?;
//! stream.synchronize()?;
//! assert_eq!(data.to_vec()?, [1, 2, 3]);
//! # Ok::<(), cuda_graph::CudaError>(())
//! ```
//!
//! # Process-wide state
//! Some state is shared by every user of this crate in a process (another library built on it
//! included). What one user does to it, and what another may notice:
//! - **The capture gate and registry** (`capture_gate`): a read-write gate between queuing
//!   stream work (read) and beginning, ending or joining a capture (write), and the captures
//!   in progress, by stream handle. Scoped per stream: a capture of one library never claims
//!   another's work; its begin and end only hold other threads' launches back for the call.
//! - **Errors no caller could be handed** ([`take_unreported_errors`]): destructors' (of this
//!   crate, device-launch and cuda-graph-nccl) and host functions': one list for the process;
//!   taking it takes everyone's.
//!   Drain them where the process has one owner of error reporting.
//! - **The parked-exec pool** ([`graph::exec_pool_stats`]): dropped device-launch execs, kept
//!   by device, graph shape and flags, so an exec parked on one device is reused only on that
//!   device, by a graph of the same shape. Its capacity
//!   ([`graph::set_exec_pool_capacity`]) is one number for the process.
//! - **Per-device memory pools** of [`DeviceBuffer::alloc_async`] and the count of
//!   stream-ordered allocations alive: scoped by device; they only decide when frees wait.
//! - **Loaded-once libraries**: NVRTC (the `nvrtc` feature) and kernel names of modules
//!   ([`kernel::Module`]) interned for the process.
//!
//! # Rust version
//! Rust 1.82 or newer (`rust-version`), with the `nvrtc` feature too. The `cudarc` feature
//! needs **Rust 1.88**: cudarc 0.19.10 depends on libloading 0.9, which declares 1.88, and
//! Cargo refuses it on older toolchains. CI checks both (`scripts/ci-msrv` in the repository).
//!
//! # Layers
//! Each module imports only modules of lower layers, never one of its own layer or above
//! (re-exports here aside); the workspace's `tests/tests/layers.rs` reads this list and the
//! sources and fails on an upward import. Lowest first:
//! 1. `runtime` — the CUDA runtime as the crate calls it: each call refused inside a host
//!    function, where CUDA forbids CUDA calls.
//! 2. `error` — [`CudaError`], [`Result`], the `check` of CUDA statuses, [`UpdateRefusal`], and
//!    [`Refusal`], why a call was refused before CUDA saw it ([`refusal`]).
//! 3. `release`, `driver` — releasing resources: [`KeepAlive`], destructor errors
//!    ([`take_unreported_errors`]), drops deferred out of host functions ([`drop_outside_host_fn`]);
//!    the driver functions the runtime hands out (parameter layouts, active contexts, launches).
//! 4. `device` — [`Device`] and its properties, the thread's current device, peer access.
//! 5. `stream` — [`Stream`], which belongs to a device.
//! 6. `capture_gate`, `graph_memory` — the gate between queuing stream work and beginning or
//!    ending a capture, and the registry of captures in progress; [`GraphMemoryUsage`].
//! 7. `event`, `host_fn` — [`Event`]; host functions on streams and graph host nodes.
//! 8. `memory`, `completion` — device, pinned and mapped buffers, typed device pointers, pools,
//!    async copies, the device memory lives on and copies between devices; [`Completion`],
//!    futures of stream work, events and exec launches.
//! 9. `kernel` — typed kernels, their arguments, launch configuration and stream launches.
//! 10. `graph` — graphs, nodes, capture, execs, updates, and the device-launch exec pool.
//! 11. `interop` — other Rust CUDA crates (cudarc, with the `cudarc` feature) on this one.
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

mod capture_gate;
mod completion;
mod device;
mod driver;
mod error;
mod event;
pub mod graph;
mod graph_memory;
mod host_fn;
pub mod interop;
pub mod kernel;
pub mod memory;
mod release;
mod runtime;
mod stream;

pub use completion::Completion;
pub use device::{Device, DeviceProperties, Limit};
pub use error::{refusal, CudaError, Refusal, Result};
pub use event::{BorrowedEvent, Event, EventOptions};
pub use graph::{
    CaptureMode, ConditionalHandle, DeviceLaunch, Graph, GraphBuilder, GraphExec, HostLaunch,
    InstantiateOptions, UpdateRefusal,
};
pub use graph_memory::GraphMemoryUsage;
pub use kernel::{Kernel, KernelArgs, KernelParam, LaunchConfig, ParamLayout};
pub use memory::{
    DeviceBuffer, DeviceConstPtr, DevicePtr, DeviceRepr, DeviceSlice, KeepAlive, MappedBuffer, MemoryPool,
    MemoryPoolOptions, PinnedBuffer, PinnedSlice, PinnedSliceMut,
};
pub use release::{drop_outside_host_fn, record_unreported_error, take_unreported_errors};

/// Whether the calling thread runs a host function of this crate (a closure of
/// [`Stream::launch_host_fn`], a graph host node), where CUDA forbids CUDA calls: every CUDA
/// call of this crate is refused there. For crates built on this one that call CUDA (or a
/// library such as NCCL) themselves, to refuse likewise before they start.
///
/// ```
/// assert!(!cuda_graph::in_host_function());
/// ```
pub fn in_host_function() -> bool {
    runtime::in_host_fn()
}
pub use stream::{BorrowedStream, Stream, StreamOptions};

/// The raw bindings this crate is built on, for the calls it does not wrap.
pub use cudart_graph_sys as sys;
