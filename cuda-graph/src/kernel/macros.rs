//! `kernels!`: declaring CUDA kernels once, as typed [`Kernel`](super::Kernel) handles.

/// Declares CUDA kernels (`extern "C" __global__` functions compiled into this program by
/// `cuda-build`) with their parameter types, as functions returning a typed
/// `&'static` [`Kernel`](crate::kernel::Kernel).
///
/// Each `unsafe fn name(param: Type, …);` becomes a safe `fn name() -> &'static Kernel<(Type,
/// …)>` with the given doc comments, attributes and visibility. The kernel's host stub and its
/// signature function are declared inside that function, so the Rust name clashes with
/// nothing. Parameter types are [`KernelParam`](crate::KernelParam)s:
/// [`DevicePtr<T>`](crate::DevicePtr) for `T*` (and `const T*`),
/// [`DeviceConstPtr<T>`](crate::DeviceConstPtr) for `const T*` only, and the number of the
/// same size and signedness for scalars (`u32` for `uint32_t` or `unsigned`, `f32` for
/// `float`, `u64` for `size_t` and `cudaGraphConditionalHandle`, …).
///
/// # What is checked
/// - At build time: `cuda-build` compiles, next to each `extern "C" __global__` kernel, a
///   host function `<name>__cuda_graph_signature` that returns the kernel's C++ parameter
///   types. The declaration refers to it, so a name that is not a kernel compiled by
///   `cuda-build` fails to link (`undefined symbol: <name>__cuda_graph_signature` or
///   `undefined reference to …`): the kernel is missing from `kernels/*.cu`, misspelled, not
///   `extern "C"`, or not compiled. A kernel under `#if 0` (or an `#ifdef` that is off) is not
///   compiled, so its declaration fails to link on purpose: there is no kernel to launch.
///   The target is never the cause: `cuda-build` links the kernels into every target of the
///   package that compiles them (library, binaries, tests, examples, benches) and, through
///   the library, into the crates that depend on it, so `kernels!` works in any of them.
/// - At first use (launch, graph node, [`Kernel::function`](crate::kernel::Kernel::function)):
///   the count, sizes and offsets of the compiled kernel's parameters (from the driver), then
///   each parameter's C++ type against [`KernelParam::cpp_type`](crate::KernelParam::cpp_type):
///   pointee type, constness, scalar type and signedness, struct identity. `DevicePtr<f32>`
///   for a `double*` parameter, `f32` for a `uint32_t`, or a `DeviceConstPtr` for a `T*` is
///   [`CudaError::KernelSignature`](crate::CudaError) naming the kernel, the parameter, the
///   Rust type and the C++ type, and the kernel is never launched.
///
/// # Safety
/// Each declaration is `unsafe fn`: writing it is the one promise no check can make, that the
/// kernel touches only memory it is given, **for any argument values that code able to call
/// the declared function can pass**:
/// - only through its pointer and slice parameters, and only within the elements they point
///   to. A [`DeviceSlice`](crate::DeviceSlice) (C++ `cuda_graph::slice<T>`) carries its length,
///   so a kernel that bounds its accesses by `size()` keeps the promise by construction. A
///   [`DevicePtr`](crate::DevicePtr) reaches the kernel as a bare `T*`: a kernel `(T* p,
///   uint32_t n)` that checks `i < n` is in bounds only when `n` is at most `p`'s length, so
///   its declaration is sound only where no caller can pass a larger `n`: keep it private to
///   a module whose launches pass buffer lengths (or wrap it in a safe function that checks
///   them), or give the kernel a slice;
/// - writing only through parameters it receives as `T*` or `slice<T>` (never `const T*`),
///   and only values valid for the element type;
/// - the same for what it reaches otherwise: `__device__` globals, device-side launches,
///   memory it was handed by an earlier launch.
///
/// Launching a declared kernel and adding it to graphs are then safe: every pointer argument
/// keeps its buffer alive for as long as the launch or graph uses it.
///
/// # Addresses as integers
/// `buf.as_raw() as u64` passed as a `u64` argument keeps nothing alive. It cannot reach a
/// pointer parameter: a kernel whose C++ parameter is a pointer refuses a `u64` declaration
/// (`Rust declares C++ type u64, the kernel's C++ parameter is *mut f32`). A kernel that
/// takes an integer and casts it to a pointer accesses memory it was not given as a pointer,
/// which breaks its declaration's `unsafe` promise: the author who declares such a kernel
/// takes responsibility for that memory. Device addresses that need no owner (another
/// library's memory) enter through the `unsafe` [`DevicePtr::from_raw`](crate::DevicePtr::from_raw).
///
/// ```no_run
/// use cuda_graph::{kernel::LaunchConfig, DeviceBuffer, DevicePtr, DeviceSlice, Stream};
///
/// cuda_graph::kernels! {
///     /// Writes out[i] = pattern(i, seed).
///     // SAFETY: fill_pattern writes out[i] only for i < n, and it is private: the only
///     // launch below passes n = out.len().
///     unsafe fn fill_pattern(out: DevicePtr<u32>, n: u32, seed: u32);
///     /// Writes out[i] = value for every i < out.size().
///     // SAFETY: bounded by the slice it is given, for any arguments.
///     pub unsafe fn fill_slice(out: DeviceSlice<u32>, value: u32);
///     /// Does nothing.
///     // SAFETY: touches no memory.
///     pub(crate) unsafe fn noop();
/// }
///
/// let stream = Stream::new()?;
/// let out = DeviceBuffer::<u32>::zeroed(4096)?;
/// let n = out.len() as u32;
/// fill_pattern().launch(&stream, LaunchConfig::for_elements(n, 256), (out.ptr(), n, 42))?;
/// fill_slice().launch(&stream, LaunchConfig::new(8, 256), (out.slice().first(100)?, 7))?;
/// noop().launch(&stream, LaunchConfig::new(1, 1), ())?;
/// stream.synchronize()?;
/// # Ok::<(), cuda_graph::CudaError>(())
/// ```
///
/// A declaration without `unsafe` does not compile:
///
/// ```compile_fail
/// cuda_graph::kernels! {
///     fn noop();
/// }
/// ```
#[macro_export]
macro_rules! kernels {
    // Internal: `name: Type, …` as one string, for the generated docs.
    (@signature) => { "" };
    (@signature $first:ident : $first_ty:ty $(, $param:ident : $ty:ty)*) => {
        concat!(stringify!($first), ": ", stringify!($first_ty) $(, ", ", stringify!($param), ": ", stringify!($ty))*)
    };
    // Internal: one declaration at a time.
    (@declare) => {};
    (@declare
        $(#[$attr:meta])*
        $vis:vis unsafe fn $name:ident ( $($param:ident : $ty:ty),* $(,)? );
        $($rest:tt)*
    ) => {
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
                // The kernel's signature function, generated by cuda-build.
                #[link_name = concat!(stringify!($name), "__cuda_graph_signature")]
                fn __cuda_graph_signature() -> *const ::core::ffi::c_char;
            }
            // SAFETY: `$name` and its signature function are declared `extern "C"` under the
            // names cuda-build gives them, so the program links only if cuda-build compiled an
            // `extern "C" __global__` kernel `$name` (with a generated signature function) into
            // it. The declaration is `unsafe fn`: its author promises the kernel stays inside
            // the memory it is given, for any arguments (the macro's `# Safety`). The
            // parameter types are checked against the kernel's at first use.
            static KERNEL: $crate::kernel::Kernel<($($ty,)*)> = unsafe {
                $crate::kernel::Kernel::from_stub_with_signature(
                    stringify!($name),
                    $name,
                    __cuda_graph_signature,
                    &[$(concat!(stringify!($param), ": ", stringify!($ty))),*],
                )
            };
            &KERNEL
        }
        $crate::kernels!(@declare $($rest)*);
    };
    (@declare
        $(#[$attr:meta])*
        $vis:vis fn $name:ident ( $($param:ident : $ty:ty),* $(,)? );
        $($rest:tt)*
    ) => {
        ::core::compile_error!(concat!(
            "kernel `", stringify!($name), "` must be declared `unsafe fn ", stringify!($name),
            "(...)`: declaring a kernel promises that it stays inside the memory it is given, \
             for any argument values (see the `# Safety` section of `cuda_graph::kernels!`)"
        ));
        $crate::kernels!(@declare $($rest)*);
    };
    ($($body:tt)*) => {
        $crate::kernels!(@declare $($body)*);
    };
}

/// Declares `__device__` variables compiled into this program by `cuda-build`, as functions
/// returning a `&'static` [`DeviceSymbol`](crate::kernel::DeviceSymbol).
///
/// `static name: T;` declares a variable of one `T`, `static name: [T; N];` an array of `N`;
/// each becomes `fn name() -> &'static DeviceSymbol<T>` with the given doc comments,
/// attributes and visibility. Define the variable with C linkage in a `.cu` file, so that its
/// host shadow (the host variable nvcc emits and the runtime registers) has the plain name:
///
/// ```c
/// extern "C" {
/// __device__ float scale;
/// __device__ uint32_t table[16];
/// }
/// ```
///
/// # What is checked
/// A name that is no variable of the program fails to link; one that is a host variable but
/// not a registered `__device__` variable is refused by CUDA at first use. At each use the
/// size CUDA reports (`cudaGetSymbolSize`) must equal `N * size_of::<T>()`, or the use is
/// refused: a declaration that does not match the compiled variable never copies past it. No
/// `unsafe` is asked: a variable is data, and every bit pattern is a valid
/// [`DeviceRepr`](crate::DeviceRepr). What kernels do with it stays their declaration's
/// promise ([`kernels!`](crate::kernels!)).
///
/// ```no_run
/// cuda_graph::device_symbols! {
///     /// The factor `scale_by_symbol` multiplies by.
///     pub static scale: f32;
///     /// Sixteen lookup values.
///     static table: [u32; 16];
/// }
/// scale().write(0, &[0.5])?;
/// table().write(0, &[1; 16])?;
/// assert_eq!(table().to_vec()?, [1; 16]);
/// # Ok::<(), cuda_graph::CudaError>(())
/// ```
#[macro_export]
macro_rules! device_symbols {
    (@declare) => {};
    (@declare
        $(#[$attr:meta])*
        $vis:vis static $name:ident : [$elem:ty; $len:expr];
        $($rest:tt)*
    ) => {
        $crate::device_symbols!(@item [$(#[$attr])*] $vis $name, $elem, $len);
        $crate::device_symbols!(@declare $($rest)*);
    };
    (@declare
        $(#[$attr:meta])*
        $vis:vis static $name:ident : $ty:ty;
        $($rest:tt)*
    ) => {
        $crate::device_symbols!(@item [$(#[$attr])*] $vis $name, $ty, 1);
        $crate::device_symbols!(@declare $($rest)*);
    };
    (@item [$(#[$attr:meta])*] $vis:vis $name:ident, $elem:ty, $len:expr) => {
        $(#[$attr])*
        #[doc = ""]
        #[doc = concat!(
            "The `__device__` variable `", stringify!($name), "` (", stringify!($len), " of `",
            stringify!($elem), "`), declared with `cuda_graph::device_symbols!`."
        )]
        #[allow(unsafe_code)]
        $vis fn $name() -> &'static $crate::kernel::DeviceSymbol<$elem> {
            #[allow(unused_unsafe)]
            fn shadow() -> *const ::core::ffi::c_void {
                extern "C" {
                    // The host shadow nvcc emits for the variable: only its address is used.
                    #[link_name = stringify!($name)]
                    static SHADOW: u8;
                }
                // SAFETY: only the address is taken; the static is never read or written.
                unsafe { ::core::ptr::addr_of!(SHADOW).cast() }
            }
            static SYMBOL: $crate::kernel::DeviceSymbol<$elem> =
                $crate::kernel::DeviceSymbol::from_host_shadow(stringify!($name), $len, shadow);
            &SYMBOL
        }
    };
    ($($body:tt)*) => {
        $crate::device_symbols!(@declare $($body)*);
    };
}
