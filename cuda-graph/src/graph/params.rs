//! Node parameters shared by node creation and exec updates: kernel launches, 1-D copies and
//! fills, each checked before CUDA sees it and carrying what it must keep alive.

use std::ffi::c_void;
use std::ptr;

use crate::runtime as sys;

use crate::device::Device;
use crate::error::{CudaError, Result};
use crate::kernel::{Kernel, KernelArgs, LaunchConfig};
use crate::memory::{DevicePtr, KeepAlive};

/// A kernel node's launch, checked, with what it must keep alive: the one setup every kernel
/// node goes through, whether added plainly (`add_kernel`), with attributes or programmatic
/// edges (`add_kernel_with`) or set on an exec (`set_kernel_params`), so none keeps less
/// than another (the arguments' allocations and the kernel's module, see `kernel_owners`) or
/// checks less (conditional handles, placement, configuration).
pub(crate) struct KernelLaunch<'a, A: KernelArgs> {
    call: &'static str,
    kernel: &'a Kernel<A>,
    config: &'a LaunchConfig,
    args: &'a A,
    keep: Vec<KeepAlive>,
}

impl<'a, A: KernelArgs> KernelLaunch<'a, A> {
    /// Checks `args`' conditional handles against `lineage` (the ids of the node's graph, from
    /// the root down) and their placement against `device` (the graph's), and collects what
    /// the node keeps. `call` is the public call, which errors name.
    pub(crate) fn new(
        call: &'static str, kernel: &'a Kernel<A>, config: &'a LaunchConfig, args: &'a A, lineage: &[u64],
        device: Device,
    ) -> Result<KernelLaunch<'a, A>> {
        crate::kernel::check_node_handles(call, lineage, args)?;
        let keep = crate::kernel::kernel_owners(call, kernel, args, device)?;
        Ok(KernelLaunch { call, kernel, config, args, keep })
    }

    /// What the node must keep, taken out: for a setter, which hands it over before the call
    /// (`with_raw` then gives none).
    pub(crate) fn take_keep(&mut self) -> Vec<KeepAlive> {
        std::mem::take(&mut self.keep)
    }

    /// Hands `f` the classic kernel node parameters and what they need kept, while the packed
    /// argument values they point to are alive (CUDA copies them during the call).
    pub(crate) fn with_raw<R>(
        self, f: impl FnOnce(sys::cudaKernelNodeParams, Vec<KeepAlive>) -> Result<R>,
    ) -> Result<R> {
        self.config.check(self.call)?;
        let func = self.kernel.function()?;
        let mut packed = self.args.pack();
        let mut pointers = A::pointers(&mut packed);
        let pointers = pointers.as_mut();
        let kernel_params = if pointers.is_empty() { ptr::null_mut() } else { pointers.as_mut_ptr() };
        let raw = sys::cudaKernelNodeParams {
            func: func.cast_mut(),
            gridDim: self.config.grid.into(),
            blockDim: self.config.block.into(),
            sharedMemBytes: self.config.shared_mem_bytes,
            kernelParams: kernel_params,
            extra: ptr::null_mut(),
        };
        f(raw, self.keep)
    }

    /// [`with_raw`](Self::with_raw) in the generic node form, for adding the node.
    pub(crate) fn with_node_params<R>(
        self, f: impl FnOnce(&mut sys::cudaGraphNodeParams, Vec<KeepAlive>) -> Result<R>,
    ) -> Result<R> {
        self.with_raw(|raw, keep| f(&mut kernel_node_params(raw), keep))
    }
}

/// Generic node parameters for a node of `type_`, zeroed but for the type: the caller fills
/// that type's member of the union.
pub(crate) fn node_params_of(type_: sys::cudaGraphNodeType) -> sys::cudaGraphNodeParams {
    sys::cudaGraphNodeParams { type_, ..Default::default() }
}

/// CUDA's generic-node form of a classic parameter struct (`cudaKernelNodeParams` as
/// `cudaKernelNodeParamsV2`, say): the same fields, copied by name.
macro_rules! copy_fields {
    ($from:expr => $to:path { $($field:ident),* }) => {{
        let from = $from;
        $to { $($field: from.$field),* }
    }};
}

/// The same parameters in the generic node form.
fn kernel_node_params(raw: sys::cudaKernelNodeParams) -> sys::cudaGraphNodeParams {
    let mut params = node_params_of(sys::cudaGraphNodeType::cudaGraphNodeTypeKernel);
    params.__bindgen_anon_1.kernel = copy_fields!(raw => sys::cudaKernelNodeParamsV2 {
        func, gridDim, blockDim, sharedMemBytes, kernelParams, extra
    });
    params
}

/// `count` elements of `size` bytes, checked against what both sides hold.
pub(crate) fn checked_bytes(
    call: &'static str, count: usize, size: usize, room: &[(&str, usize)],
) -> Result<usize> {
    if count == 0 {
        return Err(CudaError::invalid(call, "0 elements: CUDA refuses empty copies and fills"));
    }
    for (what, len) in room {
        if count > *len {
            return Err(CudaError::invalid(
                call,
                format!("{count} elements do not fit: the {what} has {len}"),
            ));
        }
    }
    count
        .checked_mul(size)
        .ok_or_else(|| CudaError::invalid(call, format!("{count} elements overflow usize bytes")))
}

/// A one-dimensional copy.
pub(crate) struct Copy1D {
    dst: *mut c_void,
    src: *const c_void,
    bytes: usize,
    kind: sys::cudaMemcpyKind,
    pub(crate) keep: Vec<KeepAlive>,
}

impl Copy1D {
    /// `len` elements from `src` to `dst`, both device memory.
    pub(crate) fn device<T>(
        call: &'static str, dst: &DevicePtr<T>, src: &DevicePtr<T>, len: usize,
    ) -> Result<Copy1D> {
        let bytes =
            checked_bytes(call, len, size_of::<T>(), &[("destination", dst.len()), ("source", src.len())])?;
        Ok(Copy1D {
            dst: dst.addr() as *mut c_void,
            src: src.addr() as *const c_void,
            bytes,
            kind: sys::cudaMemcpyKind::cudaMemcpyDeviceToDevice,
            keep: dst.keep_alive().into_iter().chain(src.keep_alive()).collect(),
        })
    }

    /// A copy between raw addresses whose owners the caller passes in `keep`.
    pub(crate) fn raw(
        dst: *mut c_void, src: *const c_void, bytes: usize, kind: sys::cudaMemcpyKind, keep: Vec<KeepAlive>,
    ) -> Copy1D {
        Copy1D { dst, src, bytes, kind, keep }
    }

    /// As `cudaMemcpy3DParms` (what `cudaGraphAddMemcpyNode1D` builds: pitch = width = bytes).
    pub(crate) fn params3d(&self) -> sys::cudaMemcpy3DParms {
        let pitched =
            |ptr: *mut c_void| sys::cudaPitchedPtr { ptr, pitch: self.bytes, xsize: self.bytes, ysize: 1 };
        sys::cudaMemcpy3DParms {
            srcPtr: pitched(self.src.cast_mut()),
            dstPtr: pitched(self.dst),
            extent: sys::cudaExtent { width: self.bytes, height: 1, depth: 1 },
            kind: self.kind,
            ..Default::default()
        }
    }

    pub(crate) fn node_params(&self) -> sys::cudaGraphNodeParams {
        let mut params = node_params_of(sys::cudaGraphNodeType::cudaGraphNodeTypeMemcpy);
        params.__bindgen_anon_1.memcpy =
            sys::cudaMemcpyNodeParams { copyParams: self.params3d(), ..Default::default() };
        params
    }
}

mod sealed {
    pub trait Sealed {}
}

/// A value a memset node can write: 1, 2 or 4 bytes wide (`u8`, `i8`, `u16`, `i16`, `u32`,
/// `i32`, `f32`), the element sizes CUDA's memset supports.
///
/// ```
/// use cuda_graph::graph::MemsetElement;
/// assert_eq!(1.0f32.bits(), 0x3f80_0000);
/// assert_eq!((-1i16).bits(), 0xffff);
/// ```
pub trait MemsetElement: sealed::Sealed + Copy {
    /// The value's bits, zero-extended to 32.
    fn bits(self) -> u32;
}

macro_rules! memset_elements {
    ($($t:ty => $bits:expr),*) => { $(
        impl sealed::Sealed for $t {}
        impl MemsetElement for $t {
            fn bits(self) -> u32 {
                #[allow(clippy::redundant_closure_call)]
                ($bits)(self)
            }
        }
    )* };
}
memset_elements!(
    u8 => |v: u8| v as u32, i8 => |v: i8| v as u8 as u32,
    u16 => |v: u16| v as u32, i16 => |v: i16| v as u16 as u32,
    u32 => |v: u32| v, i32 => |v: i32| v as u32, f32 => |v: f32| v.to_bits()
);

/// A one-dimensional fill.
pub(crate) struct Fill {
    dst: *mut c_void,
    value: u32,
    element_size: u32,
    width: usize,
    pub(crate) keep: Vec<KeepAlive>,
}

impl Fill {
    /// `len` elements of `dst` set to `value`.
    pub(crate) fn new<T: MemsetElement>(
        call: &'static str, dst: &DevicePtr<T>, value: T, len: usize,
    ) -> Result<Fill> {
        checked_bytes(call, len, size_of::<T>(), &[("destination", dst.len())])?;
        Ok(Fill {
            dst: dst.addr() as *mut c_void,
            value: value.bits(),
            element_size: size_of::<T>() as u32,
            width: len,
            keep: dst.keep_alive().into_iter().collect(),
        })
    }

    pub(crate) fn raw(&self) -> sys::cudaMemsetParams {
        sys::cudaMemsetParams {
            dst: self.dst,
            pitch: 0,
            value: self.value,
            elementSize: self.element_size,
            width: self.width,
            height: 1,
        }
    }

    pub(crate) fn node_params(&self) -> sys::cudaGraphNodeParams {
        let mut params = node_params_of(sys::cudaGraphNodeType::cudaGraphNodeTypeMemset);
        params.__bindgen_anon_1.memset = copy_fields!(self.raw() => sys::cudaMemsetParamsV2 {
            dst, pitch, value, elementSize, width, height
        });
        params
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ptr<T>(addr: u64, len: usize) -> DevicePtr<T> {
        // SAFETY: never dereferenced; these tests only build parameters.
        unsafe { DevicePtr::from_raw(addr, len) }
    }

    #[test]
    fn copies_are_checked_against_both_sides() {
        let (dst, src) = (ptr::<u32>(0x1000, 8), ptr::<u32>(0x2000, 4));
        let copy = Copy1D::device("copy", &dst, &src, 4).unwrap();
        let raw = copy.params3d();
        assert_eq!((raw.extent.width, raw.srcPtr.pitch, raw.dstPtr.ptr as u64), (16, 16, 0x1000));
        let err = Copy1D::device("copy", &dst, &src, 5).err().unwrap();
        assert!(err.to_string().contains("5 elements do not fit: the source has 4"), "{err}");
        assert!(Copy1D::device("copy", &dst, &src, 0).is_err());
    }

    #[test]
    fn fills_carry_the_element_size_and_bits() {
        let fill = Fill::new("fill", &ptr::<f32>(0x1000, 10), 2.0f32, 10).unwrap();
        let raw = fill.raw();
        assert_eq!((raw.value, raw.elementSize, raw.width, raw.height), (0x4000_0000, 4, 10, 1));
        let bytes = Fill::new("fill", &ptr::<i8>(0x1000, 3), -2i8, 3).unwrap().raw();
        assert_eq!((bytes.value, bytes.elementSize), (0xfe, 1));
        assert!(Fill::new("fill", &ptr::<u16>(0x1000, 3), 1u16, 4).is_err());
    }
}
