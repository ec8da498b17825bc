//! Memory: owned device buffers, the typed pointers kernels receive, what may live there,
//! page-locked host buffers, mapped (zero-copy) host memory that kernels write in place,
//! memory pools with stream-ordered allocation, and asynchronous copies and memsets.

mod async_ops;
mod buffer;
mod buffer_range;
mod const_ptr;
mod mapped;
mod pinned;
mod pinned_slice;
mod pointer;
mod pool;
mod repr;
mod slice;

pub use buffer::{DeviceBuffer, DevicePtr};
pub use const_ptr::DeviceConstPtr;
pub use mapped::{MappedBuffer, MappedWord};
pub use pinned::PinnedBuffer;
pub use pinned_slice::{PinnedSlice, PinnedSliceMut};
pub use pointer::MemoryKind;
pub use pool::{MemoryPool, MemoryPoolOptions};
pub use repr::DeviceRepr;
pub use slice::{DeviceSlice, RawDeviceSlice};

pub(crate) use buffer::{
    bytes_for, free_is_queued, note_unordered_uses, unordered_use_possible, Allocation, FreeKind,
};
pub(crate) use pinned::{as_pinned, LaunchLock, PinnedAllocation};

pub use crate::release::KeepAlive;
