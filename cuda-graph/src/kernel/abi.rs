//! The parameter (ABI) check: the Rust declaration of a kernel against the compiled kernel.
//!
//! The compiled side comes from the driver's `cuFuncGetParamInfo` (reached through
//! `cudaGetDriverEntryPointByVersion`; `cudaFuncGetParamInfo` for a module's kernels), asked
//! for each parameter's offset and size. How many there are:
//! - known from the kernel's generated signature (`kernels!` declarations, whose signature
//!   functions cuda-build compiles from the kernel's own C++ declaration; kernels of images
//!   built by `cuda_build::ImageBuild`, whose signature globals are made the same way): the
//!   driver is asked for indices `0..n` only, and no call fails;
//! - otherwise (`Kernel::from_stub` and `from_stub_with_params`, a module kernel whose image
//!   carries no types: NVRTC, other compilers' PTX), counted by asking for index 0, 1, … until
//!   the driver answers "invalid value": one failing call per kernel, at its first use, which
//!   compute-sanitizer reports as an API error under its default settings (CUDA 13.0 has no
//!   call that gives the count).
//!
//! The Rust side is laid out from [`ParamLayout`]s the way the C ABI lays out a parameter
//! buffer: each parameter at the end of the previous one, rounded up to its alignment.

use std::ffi::c_void;
use std::fmt::Write as _;
use std::ptr;

use crate::runtime as sys;

use super::ParamLayout;
use crate::error::{check, CudaError, Result};

/// One parameter's place in the parameter buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ParamSlot {
    /// Bytes from the start of the parameter buffer.
    pub(crate) offset: usize,
    /// Bytes.
    pub(crate) size: usize,
}

/// No kernel has more parameters than this (the parameter buffer is at most 32764 bytes and
/// a parameter takes at least one): a bound on the counting loop in case a driver never
/// answers "no such parameter".
const MAX_PARAMS: usize = 32_768;

/// Checks the declared `layout` of kernel `name` (host stub `stub`) against the compiled
/// kernel. `params` describes each parameter for messages (may be empty). `count`: the number
/// of parameters of the kernel's generated signature, when it has one (then no call fails).
pub(crate) fn check_kernel(
    name: &'static str, stub: *const c_void, params: &[&str], layout: &[ParamLayout], count: Option<usize>,
) -> Result<()> {
    let compiled = compiled_slots(stub, count)?;
    compare(Labels { kernel: name, params }, &declared_slots(layout), &compiled)
}

/// Checks the declared `layout` of kernel `name` of a loaded module (`kernel`, its
/// `cudaKernel_t`) against the compiled kernel (`cudaFuncGetParamInfo`, which takes kernel
/// handles). `count`: the number of parameters of the type list the image carries for it,
/// when it carries one (then no call fails).
pub(crate) fn check_loaded_kernel(
    name: &'static str, kernel: *const c_void, layout: &[ParamLayout], count: Option<usize>,
) -> Result<()> {
    let slots = parameter_slots(count, "cudaFuncGetParamInfo", |index| {
        let (mut offset, mut size) = (0usize, 0usize);
        // SAFETY: `kernel` is a kernel handle of a library the caller keeps loaded; both
        // out-pointers are valid, writable usizes.
        let status = unsafe { sys::cudaFuncGetParamInfo(kernel, index, &mut offset, &mut size) };
        match status {
            sys::cudaError::cudaSuccess => Answer::Param(ParamSlot { offset, size }),
            sys::cudaError::cudaErrorInvalidValue => {
                // No parameter at `index`: an answer, not an error to keep.
                crate::error::forget_last_error();
                Answer::NoSuchParam
            }
            status => Answer::Failed(CudaError::from_code(status.0 as i32, "cudaFuncGetParamInfo")),
        }
    })?;
    compare(Labels { kernel: name, params: &[] }, &declared_slots(layout), &slots)
}

/// What the driver answered when asked about one parameter.
enum Answer {
    /// Its place in the parameter buffer.
    Param(ParamSlot),
    /// There is no parameter at that index (`CUDA_ERROR_INVALID_VALUE`).
    NoSuchParam,
    /// Any other failure.
    Failed(CudaError),
}

/// The compiled kernel's parameters, asking `ask` about index 0, 1, …: up to `count` when the
/// count is known from the kernel's generated signature, which makes no failing call; else
/// until the answer is [`Answer::NoSuchParam`], which is how they are counted then.
///
/// With a known count, a kernel with more parameters than its signature goes unseen: that is
/// impossible when both come from the same source, as they do here (cuda-build renders the
/// signature from the kernel's own C++ declaration, `decltype(&kernel)`, in the same
/// compilation; ImageBuild's globals are rendered the same way). A kernel with fewer
/// parameters answers `NoSuchParam` early (one failing call), and the comparison then reports
/// the counts.
fn parameter_slots(
    count: Option<usize>, call: &'static str, mut ask: impl FnMut(usize) -> Answer,
) -> Result<Vec<ParamSlot>> {
    let mut slots = Vec::new();
    for index in 0..count.unwrap_or(MAX_PARAMS) {
        match ask(index) {
            Answer::Param(slot) => slots.push(slot),
            Answer::NoSuchParam => return Ok(slots),
            Answer::Failed(err) => return Err(err),
        }
    }
    if count.is_some() {
        return Ok(slots);
    }
    Err(CudaError::refused(call, crate::Refusal::TooManyParameters { max: MAX_PARAMS }))
}

/// A kernel's name and a description of each of its parameters (may be empty), which both
/// parameter checks (this one and the C++ type check) put in their messages.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Labels<'a> {
    pub(crate) kernel: &'static str,
    pub(crate) params: &'a [&'a str],
}

impl Labels<'_> {
    /// The first difference between the parameters Rust declares and the kernel's, as
    /// [`CudaError::KernelSignature`]; `Ok` when there is none. Different counts are told as
    /// "Rust declares n parameters, " then `counts`; otherwise the first parameter that
    /// `differ` finds different is told by its index and description, then `differ`'s words.
    pub(crate) fn first_difference<R, K>(
        self, rust: &[R], kernel: &[K], counts: impl FnOnce() -> String,
        differ: impl Fn(&R, &K) -> Option<String>,
    ) -> Result<()> {
        let problem = if rust.len() != kernel.len() {
            let plural = if rust.len() == 1 { "" } else { "s" };
            format!("Rust declares {} parameter{plural}, {}", rust.len(), counts())
        } else {
            let mut pairs = rust.iter().zip(kernel).enumerate();
            let Some((index, how)) = pairs.find_map(|(index, (r, k))| Some((index, differ(r, k)?))) else {
                return Ok(());
            };
            match self.params.get(index) {
                Some(param) => format!("parameter {index} (`{param}`): {how}"),
                None => format!("parameter {index}: {how}"),
            }
        };
        Err(CudaError::KernelSignature { kernel: self.kernel, problem })
    }
}

/// Where the C ABI puts parameters of these sizes and alignments.
pub(crate) fn declared_slots(layout: &[ParamLayout]) -> Vec<ParamSlot> {
    let mut end = 0usize;
    layout
        .iter()
        .map(|param| {
            let offset = end.next_multiple_of(param.align.max(1));
            end = offset + param.size;
            ParamSlot { offset, size: param.size }
        })
        .collect()
}

/// The first difference between the declared and the compiled parameters, as
/// [`CudaError::KernelSignature`]; `Ok` when count, sizes and offsets all agree.
pub(crate) fn compare(labels: Labels<'_>, declared: &[ParamSlot], compiled: &[ParamSlot]) -> Result<()> {
    let counts = || {
        let (rust, cuda) = (describe(declared), describe(compiled));
        format!("the compiled kernel has {} (Rust: {rust}; compiled: {cuda})", compiled.len())
    };
    labels.first_difference(declared, compiled, counts, |rust, cuda| {
        (rust != cuda).then(|| {
            let (rust_size, cuda_size) = (bytes(rust.size), bytes(cuda.size));
            format!(
                "Rust declares {rust_size} at offset {}, the compiled kernel has {cuda_size} at offset {}",
                rust.offset, cuda.offset
            )
        })
    })
}

fn bytes(n: usize) -> String {
    if n == 1 {
        "1 byte".to_string()
    } else {
        format!("{n} bytes")
    }
}

/// `[8@0, 4@8]` (size@offset), or `none`.
fn describe(slots: &[ParamSlot]) -> String {
    if slots.is_empty() {
        return "none".to_string();
    }
    let mut text = String::from("size@offset ");
    for (i, slot) in slots.iter().enumerate() {
        let separator = if i == 0 { "" } else { ", " };
        let _ = write!(text, "{separator}{}@{}", slot.size, slot.offset);
    }
    text
}

/// The compiled kernel's parameters, from the driver: `count` of them when known.
fn compiled_slots(stub: *const c_void, count: Option<usize>) -> Result<Vec<ParamSlot>> {
    let mut function: sys::cudaFunction_t = ptr::null_mut();
    // SAFETY: `function` is a valid out-pointer. `stub` is a host function address; the
    // runtime only looks it up in its table of registered kernels (an address that is not a
    // kernel gives cudaErrorInvalidDeviceFunction, it is never called).
    check(unsafe { sys::cudaGetFuncBySymbol(&mut function, stub) }, "cudaGetFuncBySymbol")?;
    let param_info = param_info_entry_point()?;
    parameter_slots(count, "cuFuncGetParamInfo", |index| {
        let (mut offset, mut size) = (0usize, 0usize);
        // SAFETY: `param_info` is the driver's cuFuncGetParamInfo, whose C signature is
        // PFN_cuFuncGetParamInfo; `function` came from cudaGetFuncBySymbol just above, and
        // both out-pointers are valid, writable usizes (size_t).
        let status = unsafe { param_info(function, index, &mut offset, &mut size) };
        match status {
            0 => Answer::Param(ParamSlot { offset, size }),
            sys::CUDA_ERROR_INVALID_VALUE => Answer::NoSuchParam,
            // Driver codes share the runtime's numbering for the errors this call returns.
            code => Answer::Failed(CudaError::from_code(code, "cuFuncGetParamInfo")),
        }
    })
}

/// The driver's `cuFuncGetParamInfo`.
fn param_info_entry_point() -> Result<sys::PFN_cuFuncGetParamInfo> {
    // SAFETY: PFN_cuFuncGetParamInfo transcribes cuFuncGetParamInfo's C signature at 12.4.
    unsafe {
        crate::driver::function(
            sys::CU_FUNC_GET_PARAM_INFO,
            sys::CU_FUNC_GET_PARAM_INFO_VERSION,
            "cudaGetDriverEntryPointByVersion(cuFuncGetParamInfo)",
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(params: &[(usize, usize)]) -> Vec<ParamLayout> {
        params.iter().map(|&(size, align)| ParamLayout { size, align }).collect()
    }

    fn slots(params: &[(usize, usize)]) -> Vec<ParamSlot> {
        params.iter().map(|&(offset, size)| ParamSlot { offset, size }).collect()
    }

    /// `abi_probe(float* p, uint32_t a, double b, uint8_t c, int32_t d)` as nvcc lays it out.
    fn abi_probe_compiled() -> Vec<ParamSlot> {
        slots(&[(0, 8), (8, 4), (16, 8), (24, 1), (28, 4)])
    }

    #[test]
    fn declared_offsets_follow_the_c_abi() {
        let declared = declared_slots(&layout(&[(8, 8), (4, 4), (8, 8), (1, 1), (4, 4)]));
        assert_eq!(declared, abi_probe_compiled());
        assert!(declared_slots(&[]).is_empty());
        // A 16-byte aligned parameter after one byte starts at 16.
        assert_eq!(declared_slots(&layout(&[(1, 1), (16, 16)])), slots(&[(0, 1), (16, 16)]));
    }

    #[test]
    fn a_matching_declaration_passes() {
        let declared = declared_slots(&layout(&[(8, 8), (4, 4), (8, 8), (1, 1), (4, 4)]));
        assert_eq!(
            compare(Labels { kernel: "abi_probe", params: &[] }, &declared, &abi_probe_compiled()),
            Ok(())
        );
        assert_eq!(compare(Labels { kernel: "noop", params: &[] }, &[], &[]), Ok(()));
    }

    #[test]
    fn a_wrong_size_names_the_kernel_the_parameter_and_both_layouts() {
        // `b: u32` where the kernel has `double b`.
        let declared = declared_slots(&layout(&[(8, 8), (4, 4), (4, 4), (1, 1), (4, 4)]));
        let params = ["p: DevicePtr<f32>", "a: u32", "b: u32", "c: u8", "d: i32"];
        let err = compare(Labels { kernel: "abi_probe", params: &params }, &declared, &abi_probe_compiled())
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "kernel `abi_probe`: parameter 2 (`b: u32`): Rust declares 4 bytes at offset 12, \
             the compiled kernel has 8 bytes at offset 16"
        );
    }

    #[test]
    fn a_wrong_offset_alone_is_caught() {
        // Same sizes, but the compiled kernel puts parameter 1 at 8 where Rust computes 4
        // (e.g. a C++ struct parameter with 8-byte alignment declared with a 4-aligned type).
        let err = compare(
            Labels { kernel: "k", params: &[] },
            &slots(&[(0, 4), (4, 4)]),
            &slots(&[(0, 4), (8, 4)]),
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "kernel `k`: parameter 1: Rust declares 4 bytes at offset 4, the compiled kernel has 4 bytes at offset 8"
        );
    }

    #[test]
    fn a_wrong_count_lists_both_layouts() {
        let declared = declared_slots(&layout(&[(8, 8), (4, 4), (8, 8), (1, 1)]));
        let err = compare(Labels { kernel: "abi_probe", params: &[] }, &declared, &abi_probe_compiled())
            .unwrap_err();
        assert!(matches!(&err, CudaError::KernelSignature { kernel: "abi_probe", .. }), "{err:?}");
        assert_eq!(
            err.to_string(),
            "kernel `abi_probe`: Rust declares 4 parameters, the compiled kernel has 5 \
             (Rust: size@offset 8@0, 4@8, 8@16, 1@24; compiled: size@offset 8@0, 4@8, 8@16, 1@24, 4@28)"
        );
        let err = compare(Labels { kernel: "noop", params: &[] }, &slots(&[(0, 4)]), &[]).unwrap_err();
        assert!(err.to_string().contains("Rust declares 1 parameter, the compiled kernel has 0"), "{err}");
        assert!(err.to_string().contains("compiled: none"), "{err}");
    }

    /// A driver stand-in for a kernel of `params`: answers each index asked, counting them.
    fn driver(params: &[ParamSlot], asked: &mut Vec<usize>, index: usize) -> Answer {
        asked.push(index);
        match params.get(index) {
            Some(&slot) => Answer::Param(slot),
            None => Answer::NoSuchParam,
        }
    }

    #[test]
    fn a_known_count_asks_only_for_the_parameters_there_are() {
        let compiled = abi_probe_compiled();
        let mut asked = Vec::new();
        let slots = parameter_slots(Some(5), "t", |i| driver(&compiled, &mut asked, i)).unwrap();
        assert_eq!((slots, asked), (compiled.clone(), vec![0, 1, 2, 3, 4]), "no question past the last");
        let mut asked = Vec::new();
        assert_eq!(parameter_slots(Some(0), "t", |i| driver(&compiled, &mut asked, i)).unwrap(), []);
        assert!(asked.is_empty(), "a kernel without parameters costs no call");
    }

    #[test]
    fn an_unknown_count_is_found_by_asking_one_past_the_last() {
        let compiled = abi_probe_compiled();
        let mut asked = Vec::new();
        let slots = parameter_slots(None, "t", |i| driver(&compiled, &mut asked, i)).unwrap();
        assert_eq!((slots, asked), (compiled, vec![0, 1, 2, 3, 4, 5]));
    }

    #[test]
    fn a_kernel_with_fewer_parameters_than_its_signature_is_reported_by_the_comparison() {
        let compiled = abi_probe_compiled();
        let mut asked = Vec::new();
        let slots = parameter_slots(Some(6), "t", |i| driver(&compiled, &mut asked, i)).unwrap();
        assert_eq!(slots.len(), 5);
        let declared = declared_slots(&layout(&[(8, 8), (4, 4), (8, 8), (1, 1), (4, 4), (4, 4)]));
        let err = compare(Labels { kernel: "k", params: &[] }, &declared, &slots).unwrap_err();
        assert!(err.to_string().contains("Rust declares 6 parameters, the compiled kernel has 5"), "{err}");
        let err = parameter_slots(Some(2), "t", |_| {
            Answer::Failed(CudaError::refused("t", crate::Refusal::NotPtx))
        })
        .unwrap_err();
        assert_eq!(err.refusal(), Some(&crate::Refusal::NotPtx), "the refusal passed through: {err}");
    }

    #[test]
    fn one_byte_is_singular() {
        let err =
            compare(Labels { kernel: "k", params: &[] }, &slots(&[(0, 1)]), &slots(&[(0, 2)])).unwrap_err();
        assert!(
            err.to_string().contains("Rust declares 1 byte at offset 0, the compiled kernel has 2 bytes"),
            "{err}"
        );
    }
}
