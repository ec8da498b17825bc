//! Which Rust types may be copied to and from device memory byte for byte.

/// Plain data that may be copied bytewise between host and device and read back from bytes
/// a kernel wrote: every bit pattern of its size must be a valid value (so `bool`, `char`,
/// references and enums are not `DeviceRepr`).
///
/// Each type names the C++ type kernels see it as ([`cpp_type`](DeviceRepr::cpp_type)), so
/// that a [`DevicePtr<T>`](crate::DevicePtr) is checked against a kernel's `T*` parameter
/// exactly, not only by size.
///
/// # Safety
/// Implement only for `#[repr(C)]` (or transparent) types without padding-dependent
/// invariants, for which every bit pattern is a valid value, and whose layout matches the
/// C++ type the kernels use, which `cpp_type` must name: its qualified C++ name (`Particle`,
/// `physics::Particle`), as `typeid` and the C++ ABI's demangler spell it.
///
/// ```
/// #[derive(Clone, Copy)]
/// #[repr(C)]
/// struct Particle { x: f32, y: f32, mass: f32 }
/// // SAFETY: repr(C) floats, laid out like the kernels' `struct Particle { float x, y, mass; }`;
/// // every bit pattern is a valid f32.
/// unsafe impl cuda_graph::DeviceRepr for Particle {
///     fn cpp_type() -> String {
///         "Particle".into()
///     }
/// }
/// ```
pub unsafe trait DeviceRepr: Copy + Send + Sync + 'static {
    /// The C++ type kernels see this type as, spelled as `cuda-build`'s signature functions
    /// spell it: numbers by size and signedness whatever the typedef (`u32` for `uint32_t`
    /// and `unsigned`, `u64` for `size_t`), `f32`, `f64`, arrays as `[T; N]`, classes,
    /// structs and enums by their qualified C++ name.
    ///
    /// ```
    /// use cuda_graph::DeviceRepr;
    /// assert_eq!(u32::cpp_type(), "u32");
    /// assert_eq!(<[f32; 4]>::cpp_type(), "[f32; 4]");
    /// ```
    fn cpp_type() -> String;
}

macro_rules! device_repr {
    ($($t:ty => $name:expr),*) => { $(
        // SAFETY: primitive numeric type; every bit pattern is a valid value. Its C++
        // counterpart is the number of the same size and signedness.
        unsafe impl DeviceRepr for $t {
            fn cpp_type() -> String { $name.to_string() }
        }
    )* };
}
device_repr!(
    u8 => "u8", u16 => "u16", u32 => "u32", u64 => "u64", u128 => "u128",
    usize => format!("u{}", usize::BITS),
    i8 => "i8", i16 => "i16", i32 => "i32", i64 => "i64", i128 => "i128",
    isize => format!("i{}", isize::BITS),
    f32 => "f32", f64 => "f64"
);

// SAFETY: an array of DeviceRepr values has no padding between elements and no invariant; it
// is laid out like the C++ array `T[N]`, spelled `[T; N]` by the signature functions.
unsafe impl<T: DeviceRepr, const N: usize> DeviceRepr for [T; N] {
    fn cpp_type() -> String {
        format!("[{}; {N}]", T::cpp_type())
    }
}
