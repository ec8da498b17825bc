//! NCCL collectives on `cuda-graph`'s buffers and streams: for the GPUs of one host, a
//! [`Communicator`] per device ([`Communicator::init_all`]); for one process per GPU (and
//! several hosts), a communicator per process ([`Communicator::from_env`], see "Ranks in
//! separate processes"); and all-reduce, broadcast, reduce, all-gather and reduce-scatter
//! queued together by a [`Group`]. Collectives queued
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
//! # Ranks must agree
//! NCCL requires every rank of a clique to issue the same collectives in the same order;
//! ranks that disagree on a count, an element type, an operation or a root make NCCL hang
//! (two H200, a broadcast of different counts from a thread per GPU) or move more data than a
//! buffer holds. So every communicator of one [`Communicator::init_on`] call shares an
//! agreement log, and [`Group::launch`] lets NCCL have a rank's collective number `k`
//! (counted per rank since `init_on`, in launch order, across every group and thread) only
//! once every rank of the clique has launched its number `k` with the same kind, count,
//! element type, operation and root:
//! - **One thread driving every rank** (one group holding them all, as above) never waits:
//!   its ranks are compared with each other, and a mismatch is `Err` with nothing recorded
//!   (the communicators work on).
//! - **A thread per rank** (each group holding some ranks): a launch waits, on the host, until
//!   the other ranks have launched their matching collectives. NCCL's own calls may already
//!   block this way ("every NCCL call may have to block, waiting for other threads/ranks to
//!   arrive"); a program must not make one rank's launch wait for another rank's launch to
//!   return. A mismatch is `Err` for every launch involved, at once, naming both ranks and
//!   both collectives. A rank that does not come within the clique's agreement timeout
//!   ([`DEFAULT_AGREEMENT_TIMEOUT`], 60 s; [`Communicator::set_agreement_timeout`], or
//!   [`AGREEMENT_TIMEOUT_VAR`] for new cliques) makes the waiting launch `Err`, naming the
//!   ranks missing and the time waited.
//! - After a mismatch between groups or a timeout the ranks are out of step, so the clique is
//!   **poisoned**: every later launch on it is `Err` at once, saying why; make new
//!   communicators. What every rank agreed on before the first collective not agreed is
//!   still queued (a launch's `Err` says how many of its collectives were), nothing after it
//!   ever reaches NCCL, and so no rank's stream waits on the device for a partner that never
//!   comes. A failure to queue collectives already agreed (NCCL's error, or `cuda-graph`
//!   refusing the stream) poisons the clique too when the group held only some of its ranks:
//!   the others may have queued their share, which then waits on the device.
//!
//! How ranks group their collectives is not compared (rank 0 may launch two in one group
//! while rank 1 launches them one by one), only each rank's order. What NCCL does with
//! collectives that agree is NCCL's promise.
//!
//! # Ranks in separate processes
//! Serving engines that outgrow one GPU run one process per GPU, started by a launcher
//! (`torchrun`, `mpirun`, `srun`). [`Communicator::from_env`] makes this process's rank:
//! [`bootstrap::Launch`] reads the rank, world size and local rank from the launcher's
//! variables (`RANK`/`WORLD_SIZE`/`LOCAL_RANK`, or Open MPI's or Slurm's twins) and rank 0's
//! address from `MASTER_ADDR`/`MASTER_PORT`; rank 0 makes NCCL's [`UniqueId`] and hands it to
//! the others through a TCP [`bootstrap::Rendezvous`]; each rank then initializes NCCL
//! ([`Communicator::init_rank`], on the GPU `LOCAL_RANK` names). Nothing waits without limit:
//! the rendezvous fails naming the ranks that did not come (on rank 0) or the address not
//! reached (on the others), and NCCL's initialization runs nonblocking, polled up to the same
//! deadline ([`bootstrap::BOOTSTRAP_TIMEOUT_VAR`], 120 s by default) and then aborted
//! ([`RankError::InitTimeout`]). A process started without a launcher is a world of one.
//!
//! ```no_run
//! use cuda_graph::{DeviceBuffer, Stream};
//! use cuda_graph_nccl::{Communicator, Group, ReduceOp};
//! // torchrun --nproc-per-node 2 --no-python ./this-program
//! let comm = Communicator::from_env()?;
//! let stream = Stream::new_on(comm.device())?;
//! let mut data = DeviceBuffer::from_slice_on(comm.device(), &[1.0f32; 1024])?;
//! let mut group = Group::new();
//! group.all_reduce_in_place(&comm, &mut data, ReduceOp::Sum, &stream)?;
//! // SAFETY: every rank runs this program: one all-reduce (sum) of 1024 f32.
//! unsafe { group.launch_unchecked()? };
//! stream.synchronize()?;
//! assert_eq!(data.to_vec()?[0], comm.size() as f32);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! **The ranks' agreement is the caller's promise across processes.** Within a process the
//! clique's log compares every rank's collectives (above); a rank of a world that spans
//! processes sees only itself, so [`Group::launch`] refuses it, and its collectives are
//! queued by the `unsafe` [`Group::launch_unchecked`], whose contract is that every rank
//! queues the same collectives, in the same order, with the same kind, count, element type,
//! operation and root (NCCL checks none of it: ranks that disagree hang, or make NCCL move
//! more data than a rank's buffer holds). Each rank's own buffers, devices and lengths are
//! still checked. A world of one rank ([`Communicator::init_rank`] with one rank, or
//! `from_env` without a launcher) keeps the checked `launch`.
//!
//! **A rank that dies.** Before or during initialization the others fail in time (above); a
//! group NCCL still has in progress after the communicator's timeout (NCCL connects ranks on
//! their first collective) is `Err` and the communicator is aborted (`ncclCommAbort`) when
//! dropped. A peer that dies while a collective already runs on the device is not caught
//! here: that collective waits on the device until NCCL's transport reports the loss, if it
//! does (a host that vanishes may take the network's timeouts), and so does the drop of the
//! communicator, which waits for its device.
//!
//! Across hosts: see the README ("Across hosts") for `NCCL_SOCKET_IFNAME`, InfiniBand and
//! ports, and `examples/beyond/ranks` for a program launched by `torchrun`, `mpirun`, `srun`
//! or its own `--spawn N`, also over NCCL's sockets alone (two hosts simulated on one).
//!
//! # Errors
//! NCCL's status codes are [`CudaError::Library`](cuda_graph::CudaError::Library) with NCCL's
//! description and its last error message; mistakes caught before NCCL sees them (a buffer
//! or stream of another device, wrong lengths, ranks that disagree or do not come in time,
//! a poisoned clique) are `CudaError::InvalidArgument`, whose [`Refusal`](cuda_graph::Refusal)
//! says why with both sides' devices, lengths or ranks (`DevicesDiffer`, `LengthMismatch`,
//! `OutOfBounds`, `RanksOutOfStep`, ...).
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

mod agreement;
pub mod bootstrap;
mod comm;
mod group;
mod library;
mod nonblocking;
mod rank;
mod types;

pub use agreement::{AGREEMENT_TIMEOUT_VAR, DEFAULT_AGREEMENT_TIMEOUT};
pub use comm::Communicator;
pub use group::Group;
pub use library::{version, MIN_VERSION};
pub use rank::{RankError, UniqueId};
pub use types::{NcclType, ReduceOp};

/// The raw bindings this crate is built on (cudarc's), for the calls it does not wrap.
pub use cudarc::nccl::sys;
