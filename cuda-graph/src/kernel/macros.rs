//! `kernels!`: declaring CUDA kernels once, as typed [`Kernel`](super::Kernel) handles.

/// Declares CUDA kernels (`extern "C" __global__` functions compiled into this program, by
/// `cuda-build` say) with their parameter types, as functions returning a typed
/// `&'static` [`Kernel`](crate::kernel::Kernel).
///
/// Each `fn name(param: Type, …);` becomes `fn name() -> &'static Kernel<(Type, …)>` with
/// the given doc comments, attributes and visibility. The kernel's host stub is declared
/// inside that function, so the Rust name clashes with nothing. Parameter types are
/// [`KernelParam`](crate::KernelParam)s: [`DevicePtr<T>`](crate::DevicePtr) for `T*` and
/// `const T*`, and the same scalar type for scalars (`u32` for `uint32_t`, `f32` for `float`,
/// `u64` for `unsigned long long` and `cudaGraphConditionalHandle`, …).
///
/// The declaration is checked against the compiled kernel at first use (count, sizes and
/// offsets of the parameters); a mismatch is [`CudaError::KernelSignature`](crate::CudaError)
/// naming the kernel and the parameter. A name that is not a kernel of this program fails to
/// link, or fails that check (`cudaGetFuncBySymbol`), so declaring is safe. The check sees
/// sizes and offsets, not types: `f32` for a `uint32_t` (same size) passes it, so matching
/// the C++ types stays the declaration's job.
///
/// ```no_run
/// use cuda_graph::{kernel::LaunchConfig, DeviceBuffer, DevicePtr, Stream};
///
/// cuda_graph::kernels! {
///     /// Writes out[i] = pattern(i, seed).
///     pub fn fill_pattern(out: DevicePtr<u32>, n: u32, seed: u32);
///     /// Does nothing.
///     pub(crate) fn noop();
/// }
///
/// let stream = Stream::new()?;
/// let out = DeviceBuffer::<u32>::zeroed(4096)?;
/// fill_pattern().launch(&stream, LaunchConfig::for_elements(4096, 256), (out.ptr(), 4096, 42))?;
/// noop().launch(&stream, LaunchConfig::new(1, 1), ())?;
/// stream.synchronize()?;
/// # Ok::<(), cuda_graph::CudaError>(())
/// ```
#[macro_export]
macro_rules! kernels {
    // Internal: `name: Type, …` as one string, for the generated docs.
    (@signature) => { "" };
    (@signature $first:ident : $first_ty:ty $(, $param:ident : $ty:ty)*) => {
        concat!(stringify!($first), ": ", stringify!($first_ty) $(, ", ", stringify!($param), ": ", stringify!($ty))*)
    };
    ($(
        $(#[$attr:meta])*
        $vis:vis fn $name:ident ( $($param:ident : $ty:ty),* $(,)? );
    )*) => {$(
        $(#[$attr])*
        #[doc = ""]
        #[doc = concat!(
            "CUDA kernel `", stringify!($name), "(", $crate::kernels!(@signature $($param: $ty),*), ")`, ",
            "declared with `cuda_graph::kernels!`."
        )]
        #[allow(unsafe_code)]
        $vis fn $name() -> &'static $crate::kernel::Kernel<($($ty,)*)> {
            extern "C" {
                // The host stub nvcc emits for the kernel. Only its address is used (to look
                // the kernel up); it is never called from Rust.
                fn $name();
            }
            // SAFETY: `$name` is declared `extern "C"` under the kernel's name, so it is the
            // host stub nvcc emitted for an `extern "C" __global__` kernel of that name, or
            // the program does not link. Should it be some other function, the first use
            // fails in `cudaGetFuncBySymbol` (it is not a registered kernel) and it is never
            // launched; its parameter list is checked against the declaration the same way.
            static KERNEL: $crate::kernel::Kernel<($($ty,)*)> = unsafe {
                $crate::kernel::Kernel::from_stub_with_params(
                    stringify!($name),
                    $name,
                    &[$(concat!(stringify!($param), ": ", stringify!($ty))),*],
                )
            };
            &KERNEL
        }
    )*};
}
