//! Memory: owned device buffers, the typed pointers kernels receive, what may live there,
//! page-locked host buffers, memory pools with stream-ordered allocation, and asynchronous
//! copies and memsets.

mod async_ops;
mod buffer;
mod buffer_range;
mod const_ptr;
mod free;
mod pinned;
mod pinned_slice;
mod placement;
mod pointer;
mod pool;
mod raw_work;
mod repr;
mod slice;

pub use buffer::{DeviceBuffer, DevicePtr};
pub use const_ptr::DeviceConstPtr;
pub use pinned::PinnedBuffer;
pub use pinned_slice::{PinnedSlice, PinnedSliceMut};
pub use pointer::MemoryKind;
pub use pool::{MemoryPool, MemoryPoolOptions};
pub use raw_work::{queue_raw_work, RawWork};
pub use repr::DeviceRepr;
pub use slice::{DeviceSlice, RawDeviceSlice};

pub(crate) use buffer::{
    bytes_for, free_is_queued, note_unordered_uses, unordered_use_possible, Allocation, FreeKind,
};
pub(crate) use pinned::{as_pinned, LaunchLock, PinnedAllocation};
pub(crate) use placement::{any_foreign, check_owners_on};

pub use crate::release::KeepAlive;
