//! Device-initiated CUDA graph launch, made safe.
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
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

mod error_slot;
pub mod limits;

pub use error_slot::{DeviceLaunchError, ErrorSlot, Operation, RawErrorSlot};

/// The folder holding `device_launch.cuh` (this crate's `include/`).
pub const INCLUDE_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/include");
