//! `PinnedSlice` and `PinnedSliceMut`: the host's view of a [`PinnedBuffer`]'s contents, which
//! marks the buffer as borrowed by the host while it lives (see [`PinnedBuffer`], "The host
//! never touches it under a copy").

use std::fmt;
use std::ops::{Deref, DerefMut};

use crate::memory::pinned::PinnedAllocation;
#[allow(unused_imports)] // for the docs
use crate::memory::PinnedBuffer;

/// One host borrow of a pinned allocation, counted from
/// [`PinnedAllocation::borrow_for_host`] until dropped.
pub(crate) struct HostBorrow<'a> {
    allocation: &'a PinnedAllocation,
}

impl<'a> HostBorrow<'a> {
    /// Takes over the borrow just counted on `allocation`.
    pub(crate) fn new(allocation: &'a PinnedAllocation) -> HostBorrow<'a> {
        HostBorrow { allocation }
    }
}

impl Drop for HostBorrow<'_> {
    fn drop(&mut self) {
        self.allocation.end_host_borrow();
    }
}

/// The contents of a [`PinnedBuffer`], from [`PinnedBuffer::as_slice`]: derefs to `&[T]`.
/// While it lives, graph launches that use the buffer are refused with
/// `CudaError::InvalidArgument`; drop it before launching.
///
/// ```no_run
/// let buffer = cuda_graph::PinnedBuffer::from_slice(&[1u32, 2, 3])?;
/// let contents = buffer.as_slice()?;
/// assert_eq!(contents.iter().sum::<u32>(), 6);
/// assert_eq!(contents, [1, 2, 3]);
/// drop(contents); // launches that use `buffer` may go ahead again
/// # Ok::<(), cuda_graph::CudaError>(())
/// ```
pub struct PinnedSlice<'a, T> {
    slice: &'a [T],
    _borrow: HostBorrow<'a>,
}

/// The writable contents of a [`PinnedBuffer`], from [`PinnedBuffer::as_mut_slice`]: derefs
/// to `&mut [T]`. While it lives, graph launches that use the buffer are refused with
/// `CudaError::InvalidArgument`; drop it before launching.
///
/// ```no_run
/// let mut buffer = cuda_graph::PinnedBuffer::<u32>::zeroed(3)?;
/// let mut contents = buffer.as_mut_slice()?;
/// contents.copy_from_slice(&[4, 5, 6]);
/// contents[0] = 7;
/// drop(contents);
/// assert_eq!(buffer.as_slice()?, [7, 5, 6]);
/// # Ok::<(), cuda_graph::CudaError>(())
/// ```
pub struct PinnedSliceMut<'a, T> {
    slice: &'a mut [T],
    _borrow: HostBorrow<'a>,
}

impl<'a, T> PinnedSlice<'a, T> {
    pub(crate) fn new(slice: &'a [T], borrow: HostBorrow<'a>) -> PinnedSlice<'a, T> {
        PinnedSlice { slice, _borrow: borrow }
    }
}

impl<'a, T> PinnedSliceMut<'a, T> {
    pub(crate) fn new(slice: &'a mut [T], borrow: HostBorrow<'a>) -> PinnedSliceMut<'a, T> {
        PinnedSliceMut { slice, _borrow: borrow }
    }
}

impl<T> Deref for PinnedSlice<'_, T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        self.slice
    }
}

impl<T> Deref for PinnedSliceMut<'_, T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        self.slice
    }
}

impl<T> DerefMut for PinnedSliceMut<'_, T> {
    fn deref_mut(&mut self) -> &mut [T] {
        self.slice
    }
}

/// What both guards share: `AsRef`, `Debug` as the slice, and comparisons with slices,
/// arrays and vectors (so that `assert_eq!(buffer.as_slice()?, [1, 2])` reads as before).
macro_rules! slice_like {
    ($guard:ident) => {
        impl<T> AsRef<[T]> for $guard<'_, T> {
            fn as_ref(&self) -> &[T] {
                self
            }
        }

        impl<T: fmt::Debug> fmt::Debug for $guard<'_, T> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Debug::fmt(&**self, f)
            }
        }

        impl<T: PartialEq<U>, U> PartialEq<[U]> for $guard<'_, T> {
            fn eq(&self, other: &[U]) -> bool {
                **self == *other
            }
        }

        impl<T: PartialEq<U>, U> PartialEq<&[U]> for $guard<'_, T> {
            fn eq(&self, other: &&[U]) -> bool {
                **self == **other
            }
        }

        impl<T: PartialEq<U>, U> PartialEq<&mut [U]> for $guard<'_, T> {
            fn eq(&self, other: &&mut [U]) -> bool {
                **self == **other
            }
        }

        impl<T: PartialEq<U>, U, const N: usize> PartialEq<[U; N]> for $guard<'_, T> {
            fn eq(&self, other: &[U; N]) -> bool {
                **self == *other
            }
        }

        impl<T: PartialEq<U>, U> PartialEq<Vec<U>> for $guard<'_, T> {
            fn eq(&self, other: &Vec<U>) -> bool {
                **self == **other
            }
        }
    };
}

slice_like!(PinnedSlice);
slice_like!(PinnedSliceMut);

#[cfg(test)]
mod tests {
    use crate::memory::{PinnedBuffer, PinnedSlice, PinnedSliceMut};

    #[test]
    fn guards_compare_like_slices_and_can_cross_threads() {
        fn sendable<T: Send + Sync>() {}
        sendable::<PinnedSlice<'static, f32>>();
        sendable::<PinnedSliceMut<'static, f32>>();
        let mut empty = PinnedBuffer::<u16>::zeroed(0).unwrap();
        let contents = empty.as_slice().unwrap();
        assert_eq!(contents, []);
        assert_eq!(contents, Vec::<u16>::new());
        assert_eq!(contents, &[] as &[u16]);
        assert_eq!(format!("{contents:?}"), "[]");
        drop(contents);
        let mut writable = empty.as_mut_slice().unwrap();
        assert!(writable.iter_mut().next().is_none());
        assert_eq!(writable.as_ref(), &[] as &[u16]);
    }
}
