//! Memory: owned device buffers, the typed pointers kernels receive, what may live there,
//! page-locked host buffers, mapped (zero-copy) host memory that kernels write in place,
//! memory pools with stream-ordered allocation, and asynchronous copies and memsets.

/// `len`, `is_empty` and `bytes` for the buffer type `$name`, whose `len` field counts
/// elements of `T`, documented with examples of that type.
macro_rules! element_counts {
    ($name:literal) => {
        /// Number of elements.
        ///
        /// ```no_run
        #[doc = concat!("assert_eq!(cuda_graph::", $name, "::<u32>::zeroed(10)?.len(), 10);")]
        /// # Ok::<(), cuda_graph::CudaError>(())
        /// ```
        pub fn len(&self) -> usize {
            self.len
        }

        /// True when the buffer has no elements (zero elements need no CUDA call).
        ///
        /// ```
        #[doc = concat!("assert!(cuda_graph::", $name, "::<u32>::zeroed(0)?.is_empty());")]
        /// # Ok::<(), cuda_graph::CudaError>(())
        /// ```
        pub fn is_empty(&self) -> bool {
            self.len == 0
        }

        /// Size in bytes.
        ///
        /// ```no_run
        #[doc = concat!("assert_eq!(cuda_graph::", $name, "::<u32>::zeroed(10)?.bytes(), 40);")]
        /// # Ok::<(), cuda_graph::CudaError>(())
        /// ```
        pub fn bytes(&self) -> usize {
            self.len * size_of::<T>()
        }
    };
}

/// The pitched type `$name<T>`: a `PitchedCore<T>` (one allocation, shared like a buffer's),
/// with a `Debug` showing its address, sizes and pitch.
macro_rules! pitched_type {
    ($(#[$meta:meta])* pub struct $name:ident;) => {
        $(#[$meta])*
        pub struct $name<T: DeviceRepr> {
            core: PitchedCore<T>,
        }

        impl<T: DeviceRepr> fmt::Debug for $name<T> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.core.debug_as(stringify!($name), f)
            }
        }
    };
}

/// `as_raw`, `keep_alive` and `core` of a pitched type over its `core: PitchedCore<T>`
/// (`PitchedBuffer`, `PitchedVolume`): `$origin` is its first element's coordinates, and the
/// examples make one with `$make` (an expression with its `?`, naming `cuda_graph::memory`'s
/// types unqualified).
macro_rules! pitched_accessors {
    ($origin:literal, $make:literal) => {
        #[doc = concat!("The device address of element ", $origin, ", for calls this crate does not wrap.")]
        ///
        /// ```no_run
        /// # use cuda_graph::memory::{Extent3D, PitchedBuffer, PitchedVolume};
        #[doc = concat!("let pitched = ", $make, ";")]
        /// assert!(!pitched.as_raw().is_null());
        /// # Ok::<(), cuda_graph::CudaError>(())
        /// ```
        pub fn as_raw(&self) -> *mut c_void {
            self.core.as_raw()
        }

        /// A shared owner of the memory, for keeping it alive elsewhere.
        ///
        /// ```no_run
        /// # use cuda_graph::memory::{Extent3D, PitchedBuffer, PitchedVolume};
        #[doc = concat!("let owner = ", $make, ".keep_alive();")]
        /// # Ok::<(), cuda_graph::CudaError>(())
        /// ```
        pub fn keep_alive(&self) -> KeepAlive {
            self.core.keep_alive()
        }

        /// The pitched allocation this is.
        pub(crate) fn core(&self) -> &PitchedCore<T> {
            &self.core
        }
    };
}

/// The buffer type `$name<T>`: `len` elements of `T` in a shared `Arc<$alloc>` (freed after
/// the last owner), with a `Debug` showing the allocation's address and `len`.
macro_rules! typed_buffer {
    ($(#[$meta:meta])* pub struct $name:ident over $vis:vis $alloc:ty;) => {
        $(#[$meta])*
        pub struct $name<T: DeviceRepr> {
            $vis allocation: Arc<$alloc>,
            len: usize,
            _element: PhantomData<T>,
        }

        impl<T: DeviceRepr> fmt::Debug for $name<T> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_struct(stringify!($name)).field("ptr", &self.allocation.ptr).field("len", &self.len).finish()
            }
        }
    };
}

mod async_ops;
mod buffer;
mod buffer_range;
mod const_ptr;
mod copy_bounds;
mod copy_queue;
mod free;
mod mapped;
mod pinned;
mod pinned_slice;
mod pitched;
mod pitched_core;
mod placement;
mod pointer;
mod pool;
mod raw_work;
mod repr;
mod slice;
mod volume;

pub use buffer::{DeviceBuffer, DevicePtr};
pub use const_ptr::DeviceConstPtr;
pub use copy_bounds::{Extent2D, Extent3D};
pub use mapped::{MappedBuffer, MappedWord};
pub use pinned::PinnedBuffer;
pub use pinned_slice::{PinnedSlice, PinnedSliceMut};
pub use pitched::PitchedBuffer;
pub use pointer::MemoryKind;
pub use pool::{MemoryPool, MemoryPoolOptions};
pub use raw_work::{queue_raw_work, RawWork};
pub use repr::DeviceRepr;
pub use slice::{DeviceSlice, RawDeviceSlice};
pub use volume::PitchedVolume;

pub(crate) use buffer::{
    bytes_for, free_is_queued, in_pool, memcpy_sync, note_unordered_uses, unordered_use_possible, Allocation,
    FreeKind,
};
pub(crate) use copy_bounds::{CheckedCopy, Side, Volume};
pub(crate) use copy_queue::{LinearSide, DEVICE_TO_DEVICE};
pub(crate) use free::{devices_idle, EVERY_DEVICE};
pub(crate) use pinned::{any_alive as any_pinned_alive, as_pinned, LaunchLock, PinnedAllocation};
pub(crate) use pitched_core::PitchedCore;
pub(crate) use placement::{any_foreign, check_owners_on};

pub use crate::release::KeepAlive;
