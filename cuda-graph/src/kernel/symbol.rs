//! `DeviceSymbol<T>`: a `__device__` variable (or array) of the program (declared with
//! [`device_symbols!`](crate::device_symbols!)) or of a module loaded at run time
//! ([`Module::symbol`](super::Module::symbol)), and copies into and out of it.
//!
//! # What is checked
//! Each use looks the variable up on the device it runs on (`cudaGetSymbolAddress` and
//! `cudaGetSymbolSize`, or `cudaLibraryGetGlobal`: every device has its own instance) and
//! refuses it unless CUDA's size is exactly `len` elements of `T`. The declaration is checked,
//! not trusted: a wrong length or element size is an `Err`, never a copy past the variable.
//! Element types of the same size are not told apart (a `float` read as `u32` gives its bits:
//! every bit pattern is a valid [`DeviceRepr`]). Offsets and lengths are checked inside the
//! variable before CUDA sees a copy.
//!
//! # Global memory, shared by every kernel
//! A `__device__` variable is memory any kernel of its program (or module) may read and write
//! at any time, so copies take the symbol by `&`. Copies are ordered like buffer copies: on
//! their stream (or the legacy stream for the synchronous ones). A kernel on another stream
//! that touches the variable while a copy runs races with it: it reads old or new values,
//! or leaves its own, as two kernels writing one buffer would; never undefined behaviour on
//! the host, since the host never holds a reference to device memory. The host sides are
//! kept as the buffer copies keep them (`memory::async_ops`): pinned buffers fenced, device
//! buffers alive until the copy ran, and a module's variables alive (the module loaded) until
//! the work using them completed.

use std::ffi::{c_void, CString};
use std::fmt;
use std::marker::PhantomData;
use std::ptr;
use std::sync::Arc;

use crate::runtime as sys;

use super::module::Library;
use crate::device::Device;
use crate::error::{check, CudaError, Result};
use crate::memory::{
    memcpy_sync, CheckedCopy, DeviceBuffer, DevicePtr, DeviceRepr, KeepAlive, LinearSide, PinnedBuffer, Side,
    Volume,
};
use crate::stream::Stream;

/// Where a symbol is looked up.
enum Source {
    /// A variable of this program: the address of its host shadow, which the runtime registers.
    Shadow(fn() -> *const c_void),
    /// A global of a loaded module.
    Module(Arc<Library>, CString),
}

/// A `__device__` variable of `len` values of `T`: one value (`__device__ T name;`) or an
/// array (`__device__ T name[len];`). Made by [`device_symbols!`](crate::device_symbols!) for
/// variables compiled into this program, by [`Module::symbol`](super::Module::symbol) for
/// globals of a module loaded at run time. See the module docs for what is checked and how
/// copies are ordered.
///
/// ```no_run
/// cuda_graph::device_symbols! {
///     /// The scale kernels of this program read (`extern "C" { __device__ float scale; }`).
///     static scale: f32;
/// }
/// scale().write(0, &[2.5])?;
/// assert_eq!(scale().to_vec()?, [2.5]);
/// # Ok::<(), cuda_graph::CudaError>(())
/// ```
pub struct DeviceSymbol<T: DeviceRepr> {
    name: &'static str,
    len: usize,
    source: Source,
    _element: PhantomData<fn() -> T>,
}

impl<T: DeviceRepr> fmt::Debug for DeviceSymbol<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DeviceSymbol({}, len {})", self.name, self.len)
    }
}

impl<T: DeviceRepr> DeviceSymbol<T> {
    /// The variable `name` of `len` elements whose host shadow's address `shadow` returns
    /// (what [`device_symbols!`](crate::device_symbols!) writes). Safe: an address that is not
    /// a registered `__device__` variable is refused by CUDA at first use.
    ///
    /// ```no_run
    /// fn no_shadow() -> *const std::ffi::c_void {
    ///     std::ptr::null()
    /// }
    /// static MISSING: cuda_graph::kernel::DeviceSymbol<u32> =
    ///     cuda_graph::kernel::DeviceSymbol::from_host_shadow("missing", 1, no_shadow);
    /// assert!(MISSING.to_vec().is_err());
    /// ```
    pub const fn from_host_shadow(name: &'static str, len: usize, shadow: fn() -> *const c_void) -> Self {
        DeviceSymbol { name, len, source: Source::Shadow(shadow), _element: PhantomData }
    }

    /// The global `name` of a loaded module, `len` elements.
    pub(super) fn in_module(library: Arc<Library>, name: &'static str, c_name: CString, len: usize) -> Self {
        DeviceSymbol { name, len, source: Source::Module(library, c_name), _element: PhantomData }
    }

    /// The variable's name.
    ///
    /// ```no_run
    /// cuda_graph::device_symbols! { static limit: u64; }
    /// assert_eq!(limit().name(), "limit");
    /// ```
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// Elements of `T` the declaration says the variable holds (checked at each use).
    ///
    /// ```no_run
    /// cuda_graph::device_symbols! { static weights: [f32; 64]; }
    /// assert_eq!(weights().len(), 64);
    /// ```
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when declared with no element.
    ///
    /// ```no_run
    /// cuda_graph::device_symbols! { static weights: [f32; 64]; }
    /// assert!(!weights().is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The variable's address on `device`, checked to hold `len` elements of `T`, as a
    /// pointer that keeps a module's variable alive (a program's lives as long as the device's
    /// primary context, which this crate never destroys).
    pub(crate) fn ptr_on(&self, device: Device, call: &'static str) -> Result<DevicePtr<T>> {
        let (addr, bytes, owner) = device.with_current(|| self.lookup())?;
        let wanted = self.len.checked_mul(size_of::<T>());
        if wanted != Some(bytes) {
            return Err(CudaError::refused(
                call,
                crate::Refusal::SymbolSizeMismatch {
                    name: self.name,
                    bytes,
                    len: self.len,
                    element_bytes: size_of::<T>(),
                },
            ));
        }
        Ok(match owner {
            Some(owner) => DevicePtr::owned(addr as u64, self.len, owner),
            // SAFETY: CUDA's address of a registered variable of this program on `device`,
            // `bytes == len * size_of::<T>()` long (checked), valid while the primary context
            // lives: this crate never resets a device.
            None => unsafe { DevicePtr::from_raw(addr as u64, self.len) },
        })
    }

    /// Address, size in bytes and owner on the current device.
    fn lookup(&self) -> Result<(usize, usize, Option<KeepAlive>)> {
        match &self.source {
            Source::Shadow(shadow) => {
                let symbol = shadow();
                let (mut addr, mut bytes) = (ptr::null_mut(), 0usize);
                // SAFETY: both outputs are writable; CUDA looks `symbol` up in its registry
                // and refuses an address that is not a registered variable.
                let status = unsafe { sys::cudaGetSymbolAddress(&mut addr, symbol) };
                lookup_status(status, "cudaGetSymbolAddress")?;
                // SAFETY: as above.
                let status = unsafe { sys::cudaGetSymbolSize(&mut bytes, symbol) };
                lookup_status(status, "cudaGetSymbolSize")?;
                Ok((addr as usize, bytes, None))
            }
            Source::Module(library, name) => {
                let (addr, bytes) = library.global(name)?;
                Ok((addr, bytes, Some(library.clone() as KeepAlive)))
            }
        }
    }

    /// Checks `count` elements at `offset` inside the variable.
    fn range(&self, call: &'static str, offset: usize, count: usize) -> Result<()> {
        if offset.checked_add(count).is_some_and(|end| end <= self.len) {
            return Ok(());
        }
        Err(CudaError::refused(
            call,
            crate::refusal::Bounds::Symbol { count, offset, name: self.name, len: self.len },
        ))
    }

    /// `count` elements of the variable at `offset` on `device`, checked.
    pub(crate) fn range_on(
        &self, device: Device, call: &'static str, offset: usize, count: usize,
    ) -> Result<DevicePtr<T>> {
        self.range(call, offset, count)?;
        self.ptr_on(device, call)?.offset(offset)
    }

    /// Copies `data` into the variable at element `offset`, on the current device
    /// (`cudaMemcpy`, synchronous: ordered as [`DeviceBuffer::copy_from_host`]).
    ///
    /// ```no_run
    /// cuda_graph::device_symbols! { static table: [u32; 8]; }
    /// table().write(6, &[1, 2])?;
    /// assert!(table().write(7, &[1, 2]).is_err()); // past the end
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn write(&self, offset: usize, data: &[T]) -> Result<()> {
        let host = data.as_ptr().cast_mut().cast();
        // SAFETY: `data` is `data.len()` elements, only read; T is plain data.
        unsafe { self.host_copy("DeviceSymbol::write", offset, host, data.len(), true) }
    }

    /// Queues a copy of all of `src` into the variable at element `offset` on `stream`
    /// (the variable of the stream's device) and returns at once. May be captured, as
    /// [`DeviceBuffer::copy_from_device_async`].
    ///
    /// ```no_run
    /// cuda_graph::device_symbols! { static table: [u32; 8]; }
    /// let stream = cuda_graph::Stream::new()?;
    /// table().copy_from_device_async(4, &cuda_graph::DeviceBuffer::from_slice(&[7u32; 4])?, &stream)?;
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn copy_from_device_async(
        &self, offset: usize, src: &DeviceBuffer<T>, stream: &Stream,
    ) -> Result<()> {
        const CALL: &str = "DeviceSymbol::copy_from_device_async";
        self.linear_async(CALL, offset, src, true, stream)
    }

    /// Queues a copy of pinned `src` into the variable at element `offset` on `stream`.
    /// Writing or dropping `src` waits for the copy (a fence, as
    /// [`DeviceBuffer::copy_from_pinned_async`]). Refused while `stream` is being captured.
    ///
    /// ```no_run
    /// cuda_graph::device_symbols! { static table: [u32; 8]; }
    /// let stream = cuda_graph::Stream::new()?;
    /// table().copy_from_pinned_async(0, &cuda_graph::PinnedBuffer::from_slice(&[1u32; 8])?, &stream)?;
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn copy_from_pinned_async(
        &self, offset: usize, src: &PinnedBuffer<T>, stream: &Stream,
    ) -> Result<()> {
        const CALL: &str = "DeviceSymbol::copy_from_pinned_async";
        self.linear_async(CALL, offset, src, true, stream)
    }

    /// Copies `out.len()` elements of the variable from element `offset` into `out`, on the
    /// current device (`cudaMemcpy`, synchronous: ordered as [`DeviceBuffer::copy_to_host`]).
    ///
    /// ```no_run
    /// cuda_graph::device_symbols! { static table: [u32; 8]; }
    /// let mut last = [0u32; 2];
    /// table().read(6, &mut last)?;
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn read(&self, offset: usize, out: &mut [T]) -> Result<()> {
        // SAFETY: `out` is `out.len()` writable elements, borrowed mutably; every bit pattern
        // is a valid T.
        unsafe { self.host_copy("DeviceSymbol::read", offset, out.as_mut_ptr().cast(), out.len(), false) }
    }

    /// The whole variable, on the current device (synchronous, as [`read`](Self::read)).
    ///
    /// ```no_run
    /// cuda_graph::device_symbols! { static counter: u64; }
    /// println!("{}", counter().to_vec()?[0]);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn to_vec(&self) -> Result<Vec<T>> {
        let mut out = Vec::<T>::with_capacity(self.len);
        // SAFETY: the Vec's capacity is `len` writable elements; no reference to them is made
        // before `set_len`.
        unsafe { self.host_copy("DeviceSymbol::to_vec", 0, out.as_mut_ptr().cast(), self.len, false) }?;
        // SAFETY: cudaMemcpy wrote all `len` elements, and any bit pattern is a valid T.
        unsafe { out.set_len(self.len) };
        Ok(out)
    }

    /// Queues a copy of `dst.len()` elements of the variable from element `offset` into
    /// `dst` on `stream` and returns at once. May be captured.
    ///
    /// ```no_run
    /// cuda_graph::device_symbols! { static table: [u32; 8]; }
    /// let stream = cuda_graph::Stream::new()?;
    /// let mut out = cuda_graph::DeviceBuffer::<u32>::zeroed(8)?;
    /// table().copy_to_device_async(0, &mut out, &stream)?;
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn copy_to_device_async(
        &self, offset: usize, dst: &mut DeviceBuffer<T>, stream: &Stream,
    ) -> Result<()> {
        const CALL: &str = "DeviceSymbol::copy_to_device_async";
        self.linear_async(CALL, offset, dst, false, stream)
    }

    /// Queues a copy of `dst.len()` elements of the variable from element `offset` into
    /// pinned `dst` on `stream`. Reading `dst` waits for the copy. Refused while capturing.
    ///
    /// ```no_run
    /// cuda_graph::device_symbols! { static table: [u32; 8]; }
    /// let stream = cuda_graph::Stream::new()?;
    /// let mut out = cuda_graph::PinnedBuffer::<u32>::zeroed(2)?;
    /// table().copy_to_pinned_async(6, &mut out, &stream)?;
    /// println!("{:?}", out.as_slice()?);
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub fn copy_to_pinned_async(
        &self, offset: usize, dst: &mut PinnedBuffer<T>, stream: &Stream,
    ) -> Result<()> {
        const CALL: &str = "DeviceSymbol::copy_to_pinned_async";
        self.linear_async(CALL, offset, dst, false, stream)
    }

    /// Copies `count` elements between the variable from element `offset`, on the current
    /// device, and host memory at `host`: into the variable when `into_me`, out of it
    /// otherwise (`cudaMemcpy`, synchronous).
    ///
    /// # Safety
    /// `host` must be valid for reading (`into_me`) or writing `count` elements of `T`, and no
    /// reference to what is written may be alive.
    unsafe fn host_copy(
        &self, call: &'static str, offset: usize, host: *mut c_void, count: usize, into_me: bool,
    ) -> Result<()> {
        let device = Device::current()?;
        let me = self.range_on(device, call, offset, count)?.addr() as *mut c_void;
        let (dst, src, kind) = if into_me {
            (me, host, sys::cudaMemcpyKind::cudaMemcpyHostToDevice)
        } else {
            (host, me, sys::cudaMemcpyKind::cudaMemcpyDeviceToHost)
        };
        // SAFETY: the variable holds `count` elements from `offset` (checked, so their bytes
        // fit a usize as the whole variable's do), the caller promises the host side, and any
        // bit pattern is a valid T.
        unsafe { memcpy_sync(device, dst, src, count * size_of::<T>(), kind) }
    }

    /// Queues a copy between the variable from element `offset` and all of `linear` (a
    /// device buffer: may be captured; a pinned one: fenced, refused while capturing): into
    /// the variable when `into_me`, out of it otherwise.
    fn linear_async(
        &self, call: &'static str, offset: usize, linear: &impl LinearSide<T>, into_me: bool, stream: &Stream,
    ) -> Result<()> {
        let (base, len, owner) = linear.span();
        let copy =
            self.line(call, (offset, stream), (base as u64, len, owner), into_me, linear.kind(into_me))?;
        linear.queue(call, copy, &[], into_me, stream)
    }

    /// A copy, as one row, of `count` elements between the variable of the stream's device
    /// from element `offset` (checked to hold them) and `other` (which holds them, kept alive
    /// by `owner`): into the variable when `into_me`, out of it otherwise.
    fn line(
        &self, call: &'static str, (offset, stream): (usize, &Stream),
        (other, count, owner): (u64, usize, KeepAlive), into_me: bool, kind: sys::cudaMemcpyKind,
    ) -> Result<CheckedCopy> {
        let me = self.range_on(stream.device(), call, offset, count)?;
        let keep = [owner].into_iter().chain(me.keep_alive()).collect();
        let (dst, src) = if into_me { (me.addr(), other) } else { (other, me.addr()) };
        let row = |what, base: u64| {
            let bytes = count * size_of::<T>(); // fits: both sides hold `count` elements
            Side::whole(what, Volume::plane(base as usize, bytes, count, 1))
        };
        let extent = crate::memory::Extent3D { width: count, height: 1, depth: 1 };
        let (dst, src) = (row("destination", dst), row("source", src));
        CheckedCopy::checked(call, dst, src, extent, size_of::<T>(), kind, keep)
    }
}

/// A failed symbol lookup as an error, clearing the thread's last error it leaves behind.
fn lookup_status(status: sys::cudaError_t, call: &'static str) -> Result<()> {
    if status != sys::cudaError::cudaSuccess {
        crate::error::forget_last_error();
    }
    check(status, call)
}
