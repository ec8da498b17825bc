//! NCCL collectives on `cuda-graph`'s buffers and streams, for the GPUs of one host: a
//! [`Communicator`] per device ([`Communicator::init_all`]), and all-reduce, broadcast,
//! reduce, all-gather and reduce-scatter queued together by a [`Group`]. Collectives queued
//! on a stream that `cuda-graph` captures are recorded into its graph, next to kernel and
//! conditional nodes, so one graph launch per GPU can run a whole step.
//!
//! ```no_run
//! use cuda_graph::{DeviceBuffer, Stream};
//! use cuda_graph_nccl::{Communicator, Group, ReduceOp};
//! let comms = Communicator::init_all()?;
//! let streams = comms.iter().map(|c| Stream::new_on(c.device())).collect::<Result<Vec<_>, _>>()?;
//! let mut sums = comms
//!     .iter()
//!     .map(|c| DeviceBuffer::from_slice_on(c.device(), &[1.0f64; 1024]))
//!     .collect::<Result<Vec<_>, _>>()?;
//! let mut group = Group::new();
//! for ((comm, stream), sum) in comms.iter().zip(&streams).zip(&mut sums) {
//!     group.all_reduce_in_place(comm, sum, ReduceOp::Sum, stream)?;
//! }
//! group.launch()?;
//! for stream in &streams {
//!     stream.synchronize()?;
//! }
//! assert_eq!(sums[0].to_vec()?[0], comms.len() as f64);
//! # Ok::<(), cuda_graph::CudaError>(())
//! ```
//!
//! # Why a crate of its own, and why cudarc
//! NCCL is a second library with its own install, loaded at run time: keeping it out of
//! `cuda-graph` keeps that crate's dependencies and layers as they are for everyone who does
//! not need it. The bindings are cudarc's `nccl::sys` (pinned, with dynamic loading: no NCCL
//! and no CUDA needed to build), a maintained crate that tracks NCCL's headers; the safe
//! layer is this crate's, because cudarc's own safe `Comm` works on cudarc's streams and
//! buffers, not `cuda-graph`'s, and knows nothing of its captures.
//!
//! # Finding NCCL
//! The library is looked for on the first call, by cudarc's loader, under the names
//! `libnccl.so` (then `libnccl.so.13`, `.12`, `.11`, `.10`, `.9`, `.1`; cudarc does not try
//! `libnccl.so.2`, the name NCCL's own packages give it): in the folders of `LD_LIBRARY_PATH`,
//! then the loader's cache (`/etc/ld.so.cache`: a system install such as the `libnccl2` and
//! `libnccl-dev` packages), then the loader's default folders. `cargo xtask setup-cuda --nccl`
//! installs the pinned `nvidia-nccl-cu13` wheel into the project's `.cuda/nccl/` with a
//! `libnccl.so` link, and `cargo xtask test` and `bench` put `.cuda/nccl/lib` first on
//! `LD_LIBRARY_PATH`. When none is found, every call returns `CudaError::Library` naming
//! what was tried (never a panic).
//!
//! # NVLink multicast
//! Run with `NCCL_NVLS_ENABLE=0` where the GPUs are shared: NCCL's NVLink multicast (NVLS)
//! can put a host's GPUs out of service for others. This crate does not change the
//! environment (NCCL reads it at initialization); the workspace's tests, examples and
//! benchmarks set it, also for the processes they start.
//!
//! # Inside conditional nodes
//! A collective captured into a conditional node's body (a WHILE loop whose every pass
//! all-reduces, say) needs `NCCL_GRAPH_MIXING_SUPPORT=0` at NCCL's start: otherwise NCCL
//! (2.28) records an event wait node into each captured collective, so that captured and
//! eager collectives may be outstanding at once, and CUDA 13.0 refuses event wait nodes in
//! bodies (the instantiation's error names the node and the body). With it off, do not have
//! eager and captured collectives of one communicator outstanding at the same time.
//!
//! # Errors
//! NCCL's status codes are [`CudaError::Library`](cuda_graph::CudaError::Library) with NCCL's
//! description and its last error message; mistakes caught before NCCL sees them (a buffer
//! or stream of another device, wrong lengths, ranks that disagree) are
//! `CudaError::InvalidArgument` naming both sides.
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

mod comm;
mod group;
mod library;
mod types;

pub use comm::{take_drop_errors, Communicator};
pub use group::Group;
pub use library::{version, MIN_VERSION};
pub use types::{NcclType, ReduceOp};

/// The raw bindings this crate is built on (cudarc's), for the calls it does not wrap.
pub use cudarc::nccl::sys;
