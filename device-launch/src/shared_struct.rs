//! `shared_struct!`: a `#[repr(C)]` struct that `device_launch.cuh` defines too, made a
//! [`DeviceRepr`](cuda_graph::DeviceRepr) whose soundness the compiler checks.

/// Defines a `#[repr(C)]` struct of `DeviceRepr` fields, asserts at compile time that it
/// has no padding, and implements `DeviceRepr` for it with the C++ name given after `as`
/// (its counterpart in `device_launch.cuh`; the tests hold the members equal).
macro_rules! shared_struct {
    (
        $(#[$meta:meta])*
        pub struct $name:ident as $cpp:literal {
            $( $(#[$field_meta:meta])* pub $field:ident: $ty:ty, )*
        }
    ) => {
        $(#[$meta])*
        #[repr(C)]
        pub struct $name {
            $( $(#[$field_meta])* pub $field: $ty, )*
        }

        const _: () = {
            fn every_field_is_device_repr<T: cuda_graph::DeviceRepr>() {}
            let _ = || { $( every_field_is_device_repr::<$ty>(); )* };
            assert!(
                ::std::mem::size_of::<$name>() == 0 $( + ::std::mem::size_of::<$ty>() )*,
                concat!(stringify!($name), " has padding"),
            );
        };

        // SAFETY: `#[repr(C)]`, so laid out as the C++ struct of the same members in the same
        // order; without padding (the size assertion above) and with every field a
        // `DeviceRepr` (checked above), so every bit pattern is a valid value.
        unsafe impl cuda_graph::DeviceRepr for $name {
            fn cpp_type() -> String {
                $cpp.to_string()
            }
        }
    };
}
