//! Device memory: owned buffers, the typed pointers kernels receive, and what may live there.

mod buffer;
mod repr;

pub use buffer::{DeviceBuffer, DevicePtr};
pub use repr::DeviceRepr;

pub(crate) use buffer::Allocation;

/// A shared owner that keeps an allocation (or any resource a node points to) alive for as
/// long as a graph or exec that uses it. See the crate docs, "Ownership".
pub type KeepAlive = std::sync::Arc<dyn std::any::Any + Send + Sync>;
