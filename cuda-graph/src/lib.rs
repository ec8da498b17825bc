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
//! status, or the problem found before calling CUDA. Destructors never panic; errors they
//! meet are kept for [`take_drop_errors`].
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
//! # Layers
//! Each module imports only modules of lower layers, never one of its own layer or above
//! (re-exports here aside); `tests/layers.rs` reads this list and the sources and fails on an
//! upward import. Lowest first:
//! 1. `error` — [`CudaError`], [`Result`], the `check` of CUDA statuses, [`UpdateRefusal`].
//! 2. `release`, `driver` — releasing resources: [`KeepAlive`], destructor errors
//!    ([`take_drop_errors`]), drops deferred out of host functions ([`drop_outside_host_fn`]);
//!    the driver functions the runtime hands out (parameter layouts, active contexts).
//! 3. `device` — [`Device`] and its properties, the thread's current device, peer access.
//! 4. `stream` — [`Stream`], which belongs to a device.
//! 5. `capture_gate`, `graph_memory` — the gate between queuing stream work and beginning or
//!    ending a capture, and the registry of captures in progress; [`GraphMemoryUsage`].
//! 6. `event`, `host_fn` — [`Event`]; host functions on streams and graph host nodes.
//! 7. `memory` — device, pinned and mapped buffers, typed device pointers, pools, async copies,
//!    the device memory lives on and copies between devices.
//! 8. `kernel` — typed kernels, their arguments, launch configuration and stream launches.
//! 9. `graph` — graphs, nodes, capture, execs, updates, and the device-launch exec pool.
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

mod capture_gate;
mod device;
mod driver;
mod error;
mod event;
pub mod graph;
mod graph_memory;
mod host_fn;
pub mod kernel;
pub mod memory;
mod release;
mod stream;

pub use device::{Device, DeviceProperties, Limit};
pub use error::{CudaError, Result};
pub use event::{Event, EventOptions};
pub use graph::{
    CaptureMode, ConditionalHandle, DeviceLaunch, Graph, GraphBuilder, GraphExec, HostLaunch,
    InstantiateOptions, UpdateRefusal,
};
pub use graph_memory::GraphMemoryUsage;
pub use host_fn::take_host_fn_errors;
pub use kernel::{Kernel, KernelArgs, KernelParam, LaunchConfig, ParamLayout};
pub use memory::{
    DeviceBuffer, DeviceConstPtr, DevicePtr, DeviceRepr, DeviceSlice, KeepAlive, MappedBuffer, MemoryPool,
    MemoryPoolOptions, PinnedBuffer, PinnedSlice, PinnedSliceMut,
};
pub use release::{drop_outside_host_fn, take_drop_errors};
pub use stream::{Stream, StreamOptions};

/// The raw bindings this crate is built on, for the calls it does not wrap.
pub use cudart_graph_sys as sys;
