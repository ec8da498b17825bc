//! Which Rust types may be copied to and from device memory byte for byte.

/// Plain data that may be copied bytewise between host and device and read back from bytes
/// a kernel wrote: every bit pattern of its size must be a valid value (so `bool`, `char`,
/// references and enums are not `DeviceRepr`).
///
/// # Safety
/// Implement only for `#[repr(C)]` (or transparent) types without padding-dependent
/// invariants, for which every bit pattern is a valid value, and whose layout matches the
/// C++ type the kernels use.
///
/// ```
/// #[derive(Clone, Copy)]
/// #[repr(C)]
/// struct Particle { x: f32, y: f32, mass: f32 }
/// // SAFETY: repr(C) floats; every bit pattern is a valid f32.
/// unsafe impl cuda_graph::DeviceRepr for Particle {}
/// ```
pub unsafe trait DeviceRepr: Copy + Send + Sync + 'static {}

macro_rules! device_repr {
    ($($t:ty),*) => { $(
        // SAFETY: primitive numeric type; every bit pattern is a valid value.
        unsafe impl DeviceRepr for $t {}
    )* };
}
device_repr!(u8, u16, u32, u64, u128, usize, i8, i16, i32, i64, i128, isize, f32, f64);

// SAFETY: an array of DeviceRepr values has no padding between elements and no invariant.
unsafe impl<T: DeviceRepr, const N: usize> DeviceRepr for [T; N] {}
