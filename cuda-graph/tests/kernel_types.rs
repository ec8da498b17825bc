//! The parameter-type check (SOUNDNESS.md, "The holes a review found", finding 1): a kernel
//! declaration is compared with the C++ types of the compiled kernel, not only their sizes. A
//! `double*` kernel declared with `DevicePtr<f32>` is refused before it can write 8 bytes per
//! element into a buffer of 4-byte elements; read-only pointers fit only `const T*` parameters.
//!
//! Slice parameters (`DeviceSlice<T>`, C++ `cuda_graph::slice<T>`) carry their length, so a
//! kernel written against them stays inside its memory by construction.
//!
//! The `check_types` tests need no GPU (the signature functions are host code). The launch
//! tests run on the GPU; `launching_a_double_kernel_declared_f32_is_refused` and
//! `a_slice_kernel_stays_inside_its_slice` are the ones to run under compute-sanitizer
//! memcheck (0 errors).

use cuda_graph::kernel::LaunchConfig;
use cuda_graph::{CudaError, DeviceBuffer, DevicePtr, Stream};
use gpu_test_support::require_gpu;

/// The hole: `scale_f64(double* p, unsigned n)` declared with a pointer to `f32`s.
mod f32_for_double {
    use cuda_graph::DevicePtr;
    cuda_graph::kernels! {
        // SAFETY: scale_f64 writes p[i] only for i < n (the tests never launch it: the
        // declaration's types are wrong, which the check refuses).
        pub unsafe fn scale_f64(p: DevicePtr<f32>, n: u32);
    }
}

/// `saxpy(float a, const float* x, float* y, uint32_t n)` with a read-only `x`: fits.
mod const_x {
    use cuda_graph::{DeviceConstPtr, DevicePtr};
    cuda_graph::kernels! {
        // SAFETY: saxpy reads x[i] and writes y[i] only for i < n.
        pub unsafe fn saxpy(a: f32, x: DeviceConstPtr<f32>, y: DevicePtr<f32>, n: u32);
    }
}

/// `saxpy` with a read-only `y`, which the kernel writes: refused.
mod const_y {
    use cuda_graph::DeviceConstPtr;
    cuda_graph::kernels! {
        // SAFETY: as for `const_x::saxpy` (never launched: refused).
        pub unsafe fn saxpy(a: f32, x: DeviceConstPtr<f32>, y: DeviceConstPtr<f32>, n: u32);
    }
}

/// `fill_pattern(uint32_t* out, uint32_t n, uint32_t seed)` with a signed seed: same size,
/// another type: refused.
mod signed_seed {
    use cuda_graph::DevicePtr;
    cuda_graph::kernels! {
        // SAFETY: fill_pattern writes out[i] only for i < n (never launched: refused).
        pub unsafe fn fill_pattern(out: DevicePtr<u32>, n: u32, seed: i32);
    }
}

/// `abi_probe(float* p, ...)` with the pointer passed as an address (`u64`): refused, so a
/// raw address with no owner cannot reach a pointer parameter.
mod address_as_integer {
    cuda_graph::kernels! {
        // SAFETY: abi_probe writes p[0..4] (never launched: refused).
        pub unsafe fn abi_probe(p: u64, a: u32, b: f64, c: u8, d: i32);
    }
}

/// `fill_slice(cuda_graph::slice<uint32_t> out, uint32_t value)` with a slice of `f32`s:
/// refused.
mod float_slice {
    use cuda_graph::DeviceSlice;
    cuda_graph::kernels! {
        // SAFETY: fill_slice writes out[i] only for i < out.size() (never launched: refused).
        pub unsafe fn fill_slice(out: DeviceSlice<f32>, value: u32);
    }
}

fn signature_error(result: Result<(), CudaError>) -> (&'static str, String) {
    match result {
        Err(CudaError::KernelSignature { kernel, problem }) => (kernel, problem),
        other => panic!("expected KernelSignature, got {other:?}"),
    }
}

#[test]
fn every_test_kernel_declaration_matches_its_cpp_types() {
    // No GPU needed: the signature functions are host code.
    let checks = [
        ("fill_pattern", test_kernels::fill_pattern().check_types()),
        ("add_scalar", test_kernels::add_scalar().check_types()),
        ("scale_add_index", test_kernels::scale_add_index().check_types()),
        ("fill_pattern_after_spin", test_kernels::fill_pattern_after_spin().check_types()),
        ("saxpy", test_kernels::saxpy().check_types()),
        ("scale_f64", test_kernels::scale_f64().check_types()),
        ("increment_counter", test_kernels::increment_counter().check_types()),
        ("abi_probe", test_kernels::abi_probe().check_types()),
        ("noop", test_kernels::noop().check_types()),
        ("set_condition_from", test_kernels::set_condition_from().check_types()),
        ("while_step", test_kernels::while_step().check_types()),
        ("trap_if", test_kernels::trap_if().check_types()),
        ("spin_then_fill", test_kernels::spin_then_fill().check_types()),
        ("write_past_end", test_kernels::write_past_end().check_types()),
        ("const_x::saxpy", const_x::saxpy().check_types()),
        ("fill_slice", test_kernels::fill_slice().check_types()),
        ("sum_slice", test_kernels::sum_slice().check_types()),
        ("mapped_handshake", test_kernels::mapped_handshake().check_types()),
    ];
    for (name, outcome) in checks {
        assert_eq!(outcome, Ok(()), "{name}");
    }
}

#[test]
fn a_double_kernel_declared_with_f32_pointers_is_refused_without_a_gpu() {
    let (kernel, problem) = signature_error(f32_for_double::scale_f64().check_types());
    assert_eq!(kernel, "scale_f64");
    assert_eq!(
        problem,
        "parameter 0 (`p: DevicePtr<f32>`): Rust declares C++ type `*mut f32`, the kernel's C++ parameter is `*mut f64`"
    );
}

#[test]
fn read_only_pointers_fit_only_const_parameters() {
    let (_, problem) = signature_error(const_y::saxpy().check_types());
    assert!(
        problem.starts_with(
            "parameter 2 (`y: DeviceConstPtr<f32>`): Rust declares C++ type `*const f32`, \
             the kernel's C++ parameter is `*mut f32`"
        ),
        "{problem}"
    );
    // `DevicePtr` for saxpy's `const float* x` is accepted (test_kernels::saxpy), and so is a
    // `DeviceConstPtr` (const_x::saxpy): both checked in the test above.
}

#[test]
fn same_size_scalars_and_addresses_as_integers_are_refused() {
    let (_, problem) = signature_error(signed_seed::fill_pattern().check_types());
    assert!(problem.contains("parameter 2 (`seed: i32`)") && problem.contains("`u32`"), "{problem}");
    let (_, problem) = signature_error(address_as_integer::abi_probe().check_types());
    assert!(
        problem.starts_with(
            "parameter 0 (`p: u64`): Rust declares C++ type `u64`, the kernel's C++ parameter is `*mut f32`"
        ),
        "{problem}"
    );
}

/// SOUNDNESS.md, "The holes a review found", finding 1, on the device: 1 Mi `f32`s (4 MiB) given to
/// the `double*` kernel with n = 1 Mi would write 8 MiB. The launch must be refused, nothing
/// written (memcheck: 0 errors).
#[test]
fn launching_a_double_kernel_declared_f32_is_refused() {
    require_gpu!();
    let outcome = (|| -> Result<(), CudaError> {
        let n: u32 = 1 << 20;
        let stream = Stream::new()?;
        let data = DeviceBuffer::from_slice(&vec![1.0f32; n as usize])?;
        let err = f32_for_double::scale_f64()
            .launch(&stream, LaunchConfig::for_elements(n, 256), (data.ptr(), n))
            .expect_err("a double* kernel declared with DevicePtr<f32> must be refused");
        let (kernel, problem) = signature_error(Err(err));
        assert_eq!(kernel, "scale_f64");
        assert!(problem.contains("`*mut f64`"), "{problem}");
        assert!(
            matches!(f32_for_double::scale_f64().function(), Err(CudaError::KernelSignature { .. })),
            "the refusal is kept"
        );
        stream.synchronize()?;
        assert!(data.to_vec()?.iter().all(|&x| x == 1.0), "the kernel ran despite the failed check");
        Ok(())
    })();
    if let Err(err) = outcome {
        panic!("{err}");
    }
}

/// The matching declarations launch and compute: `DevicePtr<f64>` for `double*`, and
/// `DeviceConstPtr` / `DevicePtr` for `const float*`.
#[test]
fn matching_declarations_launch() {
    require_gpu!();
    let outcome = (|| -> Result<(), CudaError> {
        let stream = Stream::new()?;
        let p = DeviceBuffer::from_slice(&[1.5f64, -2.0, 0.25])?;
        test_kernels::scale_f64().launch(&stream, LaunchConfig::for_elements(3, 64), (p.ptr(), 3))?;
        let x = DeviceBuffer::from_slice(&[1.0f32, 2.0])?;
        let y = DeviceBuffer::from_slice(&[0.5f32, 0.5])?;
        let config = LaunchConfig::for_elements(2, 64);
        const_x::saxpy().launch(&stream, config, (2.0, x.const_ptr(), y.ptr(), 2))?;
        let x_writable: DevicePtr<f32> = x.ptr();
        test_kernels::saxpy().launch(&stream, config, (1.0, x_writable, y.ptr(), 2))?;
        let err = const_y::saxpy()
            .launch(&stream, config, (2.0, x.const_ptr(), y.const_ptr(), 2))
            .expect_err("a read-only y must be refused");
        assert!(err.to_string().contains("`*const f32`"), "{err}");
        stream.synchronize()?;
        assert_eq!(p.to_vec()?, [3.0, -4.0, 0.5]);
        assert_eq!(y.to_vec()?, [3.5, 6.5]);
        Ok(())
    })();
    if let Err(err) = outcome {
        panic!("{err}");
    }
}

#[test]
fn a_slice_of_another_element_type_is_refused() {
    let (kernel, problem) = signature_error(float_slice::fill_slice().check_types());
    assert_eq!(kernel, "fill_slice");
    assert_eq!(
        problem,
        "parameter 0 (`out: DeviceSlice<f32>`): Rust declares C++ type `cuda_graph::slice<*mut f32>`, \
         the kernel's C++ parameter is `cuda_graph::slice<*mut u32>`"
    );
}

/// A slice kernel launched with far more threads than elements writes only its slice:
/// `fill_slice` on the first 10 of 100 elements with 4 x 256 threads (memcheck: 0 errors).
#[test]
fn a_slice_kernel_stays_inside_its_slice() {
    require_gpu!();
    let outcome = (|| -> Result<(), CudaError> {
        let stream = Stream::new()?;
        let out = DeviceBuffer::<u32>::zeroed(100)?;
        test_kernels::fill_slice().launch(&stream, LaunchConfig::new(4, 256), (out.slice().first(10)?, 5))?;
        test_kernels::fill_slice().launch(&stream, LaunchConfig::new(1, 32), (out.slice().skip(95)?, 9))?;
        let input = DeviceBuffer::from_slice(&[1.0f32, 2.0, 3.5])?;
        let sum = DeviceBuffer::<f32>::zeroed(1)?;
        test_kernels::sum_slice().launch(&stream, LaunchConfig::new(1, 1), (input.slice(), sum.ptr()))?;
        stream.synchronize()?;
        let values = out.to_vec()?;
        assert_eq!(values[..10], [5; 10]);
        assert!(values[10..95].iter().all(|&v| v == 0), "{values:?}");
        assert_eq!(values[95..], [9; 5]);
        assert_eq!(sum.to_vec()?, [6.5]);
        Ok(())
    })();
    if let Err(err) = outcome {
        panic!("{err}");
    }
}
