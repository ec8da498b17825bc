//! The device launch modes: what runs when, and the limits (documentation only).
//!
//! Every mode is a device-side `cudaGraphLaunch(exec, <named stream>)` made by a kernel, the
//! *launcher*, which must itself run inside a graph ([`Launcher`](crate::Launcher)): on a
//! plain stream CUDA 13.0 refuses to launch it (`cudaErrorNotSupported`, 801,
//! [`Error::LauncherNotInGraph`](crate::Error::LauncherNotInGraph)). The launched exec must
//! have been instantiated for device launch and uploaded: only a
//! [`DeviceExec<Uploaded>`](crate::DeviceExec) hands out handles. CUDA allows **one
//! pending launch of an exec at a time**: launching it again (in any mode) before its previous
//! launch finished is refused with `cudaErrorInvalidValue`. The helpers of
//! `device_launch.cuh` record every refusal in an [`ErrorSlot`](crate::ErrorSlot).
//!
//! | mode | device call | when it runs | limit per launching kernel (CUDA 13.0) |
//! |---|---|---|---|
//! | fire-and-forget | `DL_FIRE_AND_FORGET(g, slot)` | at once, concurrently with the launcher; part of the launcher's graph | [`FIRE_AND_FORGET_LIMIT`] (shared with sibling) |
//! | tail | `DL_TAIL_LAUNCH(g, slot)` | after the launcher's graph completes, including all its fire-and-forget work; tail launches run in the order issued | [`TAIL_LAUNCH_LIMIT`] |
//! | sibling | `DL_SIBLING_LAUNCH(g, slot)` | at once, as a sibling of the launcher's graph (a child of its parent, not of it) | [`FIRE_AND_FORGET_LIMIT`] (shared with fire-and-forget) |
//! | self-relaunch | `DL_RELAUNCH_SELF(slot)` | a tail launch of the launcher's own graph | one pending at a time (counts as a tail launch) |
//!
//! Past a limit, the launch is refused with `cudaErrorInvalidValue` (1): the slot then reports
//! [`Operation::FireAndForget`](crate::Operation::FireAndForget) (or `TailLaunch`) and the
//! hint names the limit. The limits have one definition, in `cudadevrt-sys`: its
//! `cudadevrt_limits.cuh` defines them for device code (`device_launch.cuh` includes it and
//! names them `DL_FIRE_AND_FORGET_LIMIT` and `DL_TAIL_LAUNCH_LIMIT`), and its Rust constants,
//! re-exported here as [`FIRE_AND_FORGET_LIMIT`] and [`TAIL_LAUNCH_LIMIT`], are checked to
//! equal them.
//!
//! [`FIRE_AND_FORGET_LIMIT`]: crate::limits::FIRE_AND_FORGET_LIMIT
//! [`TAIL_LAUNCH_LIMIT`]: crate::limits::TAIL_LAUNCH_LIMIT
//!
//! The examples use the kernels of this crate's tests (`device_launch_kernels`, see its
//! `kernels/*.cu`); declare yours the same way with `cuda_graph::kernels!`, using
//! [`DeviceExecArg`](crate::DeviceExecArg) for a `cudaGraphExec_t` parameter,
//! [`DeviceExecTableArg`](crate::DeviceExecTableArg) for `const cudaGraphExec_t*`, and
//! `DevicePtr<RawErrorSlot>` for `DlErrorSlot*`.
//!
//! # Fire-and-forget
//! The launched graph starts at once and runs independently of the launcher and of other
//! fire-and-forget launches. It belongs to the launcher's graph, so synchronizing the stream
//! the launcher's graph ran on waits for it. The scheduler's way to dispatch work.
//!
//! ```no_run
//! use cuda_graph::{graph::Graph, kernel::LaunchConfig, DeviceBuffer, Stream};
//! use device_launch::{instantiate_for_device, DeviceExecTable, ErrorSlot, Launcher};
//! let stream = Stream::new()?;
//! let counters = DeviceBuffer::<u32>::zeroed(4)?;
//! // Four different graphs: one exec may not be pending twice.
//! let mut execs = Vec::new();
//! for i in 0..4 {
//!     let graph = Graph::new()?;
//!     graph.add_kernel(device_launch_kernels::dl_mark(), LaunchConfig::new(1, 1), (counters.ptr(), i), &[])?;
//!     execs.push(instantiate_for_device(&graph)?.upload(&stream)?);
//! }
//! let table = DeviceExecTable::new(&execs.iter().map(|e| e.handle()).collect::<Vec<_>>())?;
//! let (slot, accepted) = (ErrorSlot::new()?, DeviceBuffer::<u32>::zeroed(1)?);
//! let launcher = Launcher::new(
//!     device_launch_kernels::dl_fire_and_forget_all(),
//!     LaunchConfig::new(1, 1),
//!     (table.arg(), 4, accepted.ptr(), slot.ptr()),
//! )?;
//! launcher.run(&stream, &slot)?;
//! assert_eq!(counters.to_vec()?, [1, 1, 1, 1]);
//! # Ok::<(), device_launch::Error>(())
//! ```
//!
//! # Tail launch
//! The launched graph runs when the launcher's graph has completed, fire-and-forget work
//! included, whether issued before or after the tail launch; several tail launches run in
//! the order issued. It is how a device-side program orders work (a kernel cannot wait for
//! a graph it launched).
//!
//! ```no_run
//! use cuda_graph::{graph::Graph, kernel::LaunchConfig, DeviceBuffer, Stream};
//! use device_launch::{instantiate_for_device, DeviceExecTable, ErrorSlot, Launcher};
//! let stream = Stream::new()?;
//! let (log, accepted) = (DeviceBuffer::<u32>::zeroed(1 + 2 * 3)?, DeviceBuffer::<u32>::zeroed(1)?);
//! let mut execs = Vec::new();
//! for value in 0..3 {
//!     let graph = Graph::new()?;
//!     let args = (log.ptr(), 3, value, accepted.ptr());
//!     graph.add_kernel(device_launch_kernels::dl_append(), LaunchConfig::new(1, 1), args, &[])?;
//!     execs.push(instantiate_for_device(&graph)?.upload(&stream)?);
//! }
//! let table = DeviceExecTable::new(&execs.iter().map(|e| e.handle()).collect::<Vec<_>>())?;
//! let slot = ErrorSlot::new()?;
//! let launcher = Launcher::new(
//!     device_launch_kernels::dl_tail_launch_all(),
//!     LaunchConfig::new(1, 1),
//!     (table.arg(), 3, accepted.ptr(), slot.ptr()),
//! )?;
//! launcher.run(&stream, &slot)?;
//! // In order, and each saw the launcher's final write (accepted = 3).
//! assert_eq!(log.to_vec()?, [3, 0, 3, 1, 3, 2, 3]);
//! # Ok::<(), device_launch::Error>(())
//! ```
//!
//! # Sibling launch
//! Like fire-and-forget, but the launched graph becomes a sibling of the launcher's graph
//! (a child of the launcher's parent), so it does not belong to the launcher's graph and a
//! tail launch of the launcher does not wait for it. Whether a host stream synchronization
//! waits for it when the launcher's graph was launched from the host is not documented:
//! synchronize the device to be sure.
//!
//! ```no_run
//! use cuda_graph::{graph::Graph, kernel::LaunchConfig, Device, DeviceBuffer, Stream};
//! use device_launch::{instantiate_for_device, ErrorSlot};
//! let stream = Stream::new()?;
//! let counters = DeviceBuffer::<u32>::zeroed(1)?;
//! let graph = Graph::new()?;
//! graph.add_kernel(device_launch_kernels::dl_mark(), LaunchConfig::new(1, 1), (counters.ptr(), 0), &[])?;
//! let sibling = instantiate_for_device(&graph)?.upload(&stream)?;
//! let slot = ErrorSlot::new()?;
//! let _launcher = device_launch::launch_from_graph(
//!     device_launch_kernels::dl_sibling_launch_one(),
//!     LaunchConfig::new(1, 1),
//!     (sibling.handle().arg(), slot.ptr()),
//!     &stream,
//! )?;
//! Device::current()?.synchronize()?;
//! slot.check()??;
//! assert_eq!(counters.to_vec()?, [1]);
//! # Ok::<(), device_launch::Error>(())
//! ```
//!
//! # Self-relaunch
//! `DL_RELAUNCH_SELF` tail-launches the graph the kernel runs in
//! (`cudaGetCurrentGraphExec()`): a device-side loop, one iteration per run, each starting
//! after the previous one's fire-and-forget work finished. Only one self-relaunch may be
//! pending. [`Launcher`](crate::Launcher) instantiates its graph for device launch so that
//! this works.
//!
//! ```no_run
//! use cuda_graph::{kernel::LaunchConfig, DeviceBuffer, Stream};
//! use device_launch::{ErrorSlot, Launcher};
//! let (stream, slot) = (Stream::new()?, ErrorSlot::new()?);
//! let steps = DeviceBuffer::<u32>::zeroed(1)?;
//! let launcher =
//!     Launcher::new(device_launch_kernels::dl_relaunch_until(), LaunchConfig::new(1, 1), (steps.ptr(), 1000, slot.ptr()))?;
//! launcher.run(&stream, &slot)?;
//! assert_eq!(steps.to_vec()?, [1000]);
//! # Ok::<(), device_launch::Error>(())
//! ```
