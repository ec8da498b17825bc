//! How Rust values become kernel arguments: each parameter type has a raw form with the
//! kernel ABI's size and alignment, and argument tuples pack into an array of pointers to
//! those raw values (what `cudaLaunchKernel` and kernel nodes take).

use std::ffi::c_void;

use crate::error::{CudaError, Result};
use crate::memory::{DeviceConstPtr, DevicePtr, DeviceRepr, DeviceSlice, KeepAlive, RawDeviceSlice};

/// Size and alignment of one kernel parameter as the compiled kernel sees it.
///
/// ```
/// use cuda_graph::{DevicePtr, KernelArgs, ParamLayout};
/// let layout = <(DevicePtr<f32>, u32)>::layout();
/// assert_eq!(layout, [ParamLayout { size: 8, align: 8 }, ParamLayout { size: 4, align: 4 }]);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParamLayout {
    /// Bytes.
    pub size: usize,
    /// Alignment in bytes.
    pub align: usize,
}

/// A type that can be passed to a kernel parameter.
///
/// # Safety
/// `Raw` must have exactly the size, alignment and bit layout of the C++ parameter type the
/// kernel declares for it (`T*` for [`DevicePtr<T>`], the same scalar for numbers), and
/// [`cpp_type`](KernelParam::cpp_type) must name a C++ type whose values the kernel may be
/// given as this value's `Raw` without undefined behaviour (for a pointer: memory of that
/// element type, alive and with that permission, as long as a launch or node uses it).
/// [`keep_alive`](KernelParam::keep_alive) must push the owner of *each* allocation the value
/// reaches, each the allocation's own record (what [`DeviceBuffer::keep_alive`](crate::DeviceBuffer::keep_alive) and
/// [`DevicePtr::keep_alive`] return), never a wrapper that holds them: frees are ordered after
/// the uses recorded on those records, and launches and nodes on another device check them
/// (peer access, pool access) and mark them used there, so that their drop waits for that
/// device. An owner hidden inside a wrapper is kept alive, but neither checked nor waited
/// for. A value that is not memory but belongs to one device (an exec handle) reports it
/// through [`device`](KernelParam::device). A type whose
/// raw form carries a conditional handle (wrapping a
/// [`ConditionalHandle`](crate::graph::ConditionalHandle)) must report it through
/// `IS_CONDITIONAL_HANDLE` and `conditional_graph`: the defaults report none.
pub unsafe trait KernelParam: Send + Sync + 'static {
    /// The bytes the kernel receives.
    type Raw: Copy + Send + 'static;
    /// This value's raw form.
    fn raw(&self) -> Self::Raw;
    /// The C++ parameter type this Rust type stands for, spelled the way `cuda-build`'s
    /// signature functions spell a kernel's parameters: integers by size and signedness
    /// (`u32`, `i64`, `bool`), `f32`, `f64`, pointers as `*mut T` or `*const T`, classes,
    /// structs and enums by their qualified C++ name (`DlQueue`, `CUgraphExec_st`). The
    /// first use of a kernel compares it with the kernel's parameter, exactly, except that a
    /// `*mut T` declaration also accepts a `*const T` parameter (permission to write covers a
    /// kernel that only reads).
    ///
    /// ```
    /// use cuda_graph::{DeviceConstPtr, DevicePtr, KernelParam};
    /// assert_eq!(<DevicePtr<f32>>::cpp_type(), "*mut f32");
    /// assert_eq!(<DeviceConstPtr<[u8; 4]>>::cpp_type(), "*const [u8; 4]");
    /// assert_eq!(<usize>::cpp_type(), "u64");
    /// ```
    fn cpp_type() -> String;
    /// Pushes what must stay alive while a launch or node uses this value: the owner of each
    /// allocation it reaches (the buffer a pointer points into), each one pushed by itself
    /// (see the trait's safety section).
    ///
    /// ```
    /// use cuda_graph::KernelParam;
    /// let mut owners = Vec::new();
    /// 7u32.keep_alive(&mut owners);
    /// assert!(owners.is_empty());
    /// ```
    fn keep_alive(&self, owners: &mut Vec<KeepAlive>) {
        let _ = owners;
    }
    /// The device this value belongs to when it is not memory and only that device's kernels
    /// may receive it (a device-launch exec handle): launches and kernel nodes of another
    /// device refuse it, naming both. `None` (the default) for numbers and for memory, whose
    /// owners [`keep_alive`](KernelParam::keep_alive) hands out and which is checked by them.
    ///
    /// ```
    /// assert_eq!(cuda_graph::KernelParam::device(&7u32), None);
    /// ```
    fn device(&self) -> Option<crate::device::Device> {
        None
    }
    /// True for [`ConditionalHandle`](crate::graph::ConditionalHandle), which may reach only
    /// kernels of its own graph; launches check handles only when an argument list has one.
    ///
    /// ```
    /// use cuda_graph::{graph::ConditionalHandle, KernelParam};
    /// assert!(!<u32 as KernelParam>::IS_CONDITIONAL_HANDLE);
    /// assert!(<ConditionalHandle as KernelParam>::IS_CONDITIONAL_HANDLE);
    /// ```
    const IS_CONDITIONAL_HANDLE: bool = false;
    /// For a conditional handle, the id of the graph that created it (kernel nodes of other
    /// graphs and stream launches refuse it); `None` for everything else.
    ///
    /// ```
    /// assert_eq!(cuda_graph::KernelParam::conditional_graph(&7u32), None);
    /// ```
    fn conditional_graph(&self) -> Option<u64> {
        None
    }
}

/// [`KernelParam`] for device pointer types, each `Pointer as "qualifier";`: passed as its
/// 64-bit address, keeping its allocation alive, as the C++ pointer the qualifier names
/// (`"*mut"`: `T*`, `"*const"`: `const T*`). The comment above each line says what the pointer
/// may reach.
macro_rules! pointer_params {
    ($($ptr:ident as $qualifier:literal;)*) => {$(
        // SAFETY: a device pointer is passed as a 64-bit address, the layout of `T*` on the
        // device. It points into memory of `T`s (`T::cpp_type()` names their C++ type) that
        // it keeps alive; the comment at the invocation says which pointers fit it.
        unsafe impl<T: DeviceRepr> KernelParam for $ptr<T> {
            type Raw = u64;
            fn raw(&self) -> u64 {
                self.addr()
            }
            fn keep_alive(&self, owners: &mut Vec<KeepAlive>) {
                owners.extend($ptr::keep_alive(self));
            }
            fn cpp_type() -> String {
                format!(concat!($qualifier, " {}"), T::cpp_type())
            }
        }
    )*};
}

pointer_params! {
    // Carries permission to write (a buffer's `ptr()`), so `T*` and `const T*` both fit.
    DevicePtr as "*mut";
    // A read-only view of a `DevicePtr<T>`: only `const T*` fits it.
    DeviceConstPtr as "*const";
}

// SAFETY: `RawDeviceSlice` is `#[repr(C)] { u64, u64 }`, the layout of `cuda_graph::slice<T>`
// (`T*` then `uint64_t`). The address points at `len` elements of `T` (the slice never
// grows past its allocation: `first`/`skip` check) that it keeps alive, with permission to
// write, so `slice<T>` and `slice<const T>` both fit.
unsafe impl<T: DeviceRepr> KernelParam for DeviceSlice<T> {
    type Raw = RawDeviceSlice;
    fn raw(&self) -> RawDeviceSlice {
        DeviceSlice::raw(self)
    }
    fn keep_alive(&self, owners: &mut Vec<KeepAlive>) {
        owners.extend(DeviceSlice::keep_alive(self));
    }
    fn cpp_type() -> String {
        format!("cuda_graph::slice<*mut {}>", T::cpp_type())
    }
}

macro_rules! plain_params {
    ($($t:ty),*) => { $(
        // SAFETY: the same scalar type on both sides, passed by value; every bit pattern of
        // a number is a valid value of the C++ number of that size and signedness.
        unsafe impl KernelParam for $t {
            type Raw = $t;
            fn raw(&self) -> $t { *self }
            fn cpp_type() -> String { <$t as DeviceRepr>::cpp_type() }
        }
    )* };
}
plain_params!(u8, u16, u32, u64, i8, i16, i32, i64, f32, f64, usize, isize);

// SAFETY: Rust's `bool` and C++'s `bool` are one byte holding 0 or 1 on every CUDA platform;
// a `bool` value always holds one of those.
unsafe impl KernelParam for bool {
    type Raw = bool;
    fn raw(&self) -> bool {
        *self
    }
    fn cpp_type() -> String {
        "bool".to_string()
    }
}

/// A whole argument list: a tuple of up to 16 [`KernelParam`]s, `()` for none.
///
/// # Safety
/// `layout` must describe `Packed`'s fields in order, and `pointers` must return one pointer
/// per parameter, each to the corresponding raw value inside `packed`. An argument list with
/// a [`ConditionalHandle`](crate::graph::ConditionalHandle) must say so
/// (`HAS_CONDITIONAL_HANDLE`) and report its graph (`conditional_graphs`): the defaults
/// report none.
pub unsafe trait KernelArgs: Send + Sync + 'static {
    /// Number of parameters.
    const COUNT: usize;
    /// The raw values, owned, in parameter order.
    type Packed: Send + 'static;
    /// The array of `COUNT` pointers that `cudaLaunchKernel` reads.
    type Pointers: AsMut<[*mut c_void]>;
    /// The size and alignment of each parameter, for the ABI check.
    fn layout() -> Vec<ParamLayout>;
    /// The C++ type of each parameter ([`KernelParam::cpp_type`]), for the type check.
    fn cpp_types() -> Vec<String>;
    /// The raw values of these arguments.
    fn pack(&self) -> Self::Packed;
    /// Pointers to each raw value in `packed`; valid while `packed` is neither moved nor
    /// dropped.
    fn pointers(packed: &mut Self::Packed) -> Self::Pointers;
    /// Pushes what these arguments need kept alive ([`KernelParam::keep_alive`] of each).
    fn keep_alive(&self, out: &mut Vec<KeepAlive>);
    /// Calls `f` with the device of each argument bound to one ([`KernelParam::device`]).
    ///
    /// ```
    /// let mut devices = Vec::new();
    /// cuda_graph::KernelArgs::bound_devices(&(1u32, 2.0f32), &mut |device| devices.push(device));
    /// assert!(devices.is_empty());
    /// ```
    fn bound_devices(&self, f: &mut dyn FnMut(crate::device::Device)) {
        let _ = f;
    }
    /// Whether a parameter is a conditional handle ([`KernelParam::IS_CONDITIONAL_HANDLE`]).
    ///
    /// ```
    /// use cuda_graph::{graph::ConditionalHandle, DevicePtr, KernelArgs};
    /// assert!(!<(DevicePtr<u32>, u32)>::HAS_CONDITIONAL_HANDLE);
    /// assert!(<(ConditionalHandle, u32)>::HAS_CONDITIONAL_HANDLE);
    /// ```
    const HAS_CONDITIONAL_HANDLE: bool = false;
    /// Calls `f` with the graph of each conditional handle among the arguments
    /// ([`KernelParam::conditional_graph`]).
    ///
    /// ```
    /// let mut graphs = Vec::new();
    /// cuda_graph::KernelArgs::conditional_graphs(&(1u32, 2.0f32), &mut |graph| graphs.push(graph));
    /// assert!(graphs.is_empty());
    /// ```
    fn conditional_graphs(&self, f: &mut dyn FnMut(u64)) {
        let _ = f;
    }
}

macro_rules! tuple_args {
    ($count:expr; $($name:ident $index:tt),*) => {
        // SAFETY: `Packed` is the tuple of raw values in order, `layout` lists their sizes and
        // alignments in that order, and `pointers` points at each field of `packed`.
        unsafe impl<$($name: KernelParam),*> KernelArgs for ($($name,)*) {
            const COUNT: usize = $count;
            type Packed = ($($name::Raw,)*);
            type Pointers = [*mut c_void; $count];
            fn layout() -> Vec<ParamLayout> {
                vec![$(ParamLayout { size: size_of::<$name::Raw>(), align: align_of::<$name::Raw>() }),*]
            }
            fn cpp_types() -> Vec<String> {
                vec![$($name::cpp_type()),*]
            }
            #[allow(clippy::unused_unit)]
            fn pack(&self) -> Self::Packed {
                ($(self.$index.raw(),)*)
            }
            #[allow(clippy::unused_unit, unused_variables)]
            fn pointers(packed: &mut Self::Packed) -> [*mut c_void; $count] {
                [$(std::ptr::addr_of_mut!(packed.$index).cast::<c_void>()),*]
            }
            #[allow(unused_variables)]
            fn keep_alive(&self, out: &mut Vec<KeepAlive>) {
                $(self.$index.keep_alive(out);)*
            }
            #[allow(unused_variables)]
            fn bound_devices(&self, f: &mut dyn FnMut(crate::device::Device)) {
                $(if let Some(device) = self.$index.device() { f(device) })*
            }
            const HAS_CONDITIONAL_HANDLE: bool = false $(|| $name::IS_CONDITIONAL_HANDLE)*;
            #[allow(unused_variables)]
            fn conditional_graphs(&self, f: &mut dyn FnMut(u64)) {
                $(if let Some(graph) = self.$index.conditional_graph() { f(graph) })*
            }
        }
    };
}

tuple_args!(0;);
tuple_args!(1; A 0);
tuple_args!(2; A 0, B 1);
tuple_args!(3; A 0, B 1, C 2);
tuple_args!(4; A 0, B 1, C 2, D 3);
tuple_args!(5; A 0, B 1, C 2, D 3, E 4);
tuple_args!(6; A 0, B 1, C 2, D 3, E 4, F 5);
tuple_args!(7; A 0, B 1, C 2, D 3, E 4, F 5, G 6);
tuple_args!(8; A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7);
tuple_args!(9; A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8);
tuple_args!(10; A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9);
tuple_args!(11; A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10);
tuple_args!(12; A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11);
tuple_args!(13; A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11, M 12);
tuple_args!(14; A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11, M 12, N 13);
tuple_args!(15; A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11, M 12, N 13, O 14);
tuple_args!(16; A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11, M 12, N 13, O 14, P 15);

/// Refuses a kernel node (added to, or set in, the graph whose lineage is `lineage`: ids
/// from the root down to it) whose arguments hold a conditional handle of a graph outside
/// that lineage.
pub(crate) fn check_node_handles<A: KernelArgs>(call: &'static str, lineage: &[u64], args: &A) -> Result<()> {
    if !A::HAS_CONDITIONAL_HANDLE {
        return Ok(());
    }
    let mut foreign = None;
    args.conditional_graphs(&mut |graph| {
        if !lineage.contains(&graph) {
            foreign.get_or_insert(graph);
        }
    });
    match foreign {
        None => Ok(()),
        Some(graph) => Err(CudaError::refused(
            call,
            crate::Refusal::ForeignConditionalHandle {
                handle_graph: graph,
                node_graph: lineage.last().copied().unwrap_or_default(),
            },
        )),
    }
}

/// Refuses a stream launch whose arguments hold a conditional handle, unless the stream is
/// capturing into the handle's graph or a body inside it (`lineage`: that graph's ids from
/// the root down; `None` when not capturing into an existing graph of this crate).
pub(crate) fn check_launch_handles<A: KernelArgs>(lineage: Option<&[u64]>, args: &A) -> Result<()> {
    const CALL: &str = "Kernel::launch";
    match lineage {
        Some(lineage) => check_node_handles(CALL, lineage, args),
        None => {
            let mut graph = 0;
            args.conditional_graphs(&mut |g| graph = g);
            Err(CudaError::refused(
                CALL,
                crate::Refusal::ConditionalHandleOutsideCapture { handle_graph: graph },
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_follow_the_raw_types() {
        let layout = <(DevicePtr<f32>, u32, f64, u8)>::layout();
        let sizes: Vec<(usize, usize)> = layout.iter().map(|p| (p.size, p.align)).collect();
        assert_eq!(sizes, [(8, 8), (4, 4), (8, 8), (1, 1)]);
        assert!(<()>::layout().is_empty());
    }

    #[test]
    fn cpp_types_are_rendered_canonically() {
        let types = <(DevicePtr<f32>, DeviceConstPtr<u8>, u32, i64, f64, bool, usize, DevicePtr<[i16; 3]>)>::cpp_types();
        assert_eq!(types, ["*mut f32", "*const u8", "u32", "i64", "f64", "bool", "u64", "*mut [i16; 3]"]);
        assert!(<()>::cpp_types().is_empty());
        assert_eq!(<(DeviceSlice<f32>,)>::cpp_types(), ["cuda_graph::slice<*mut f32>"]);
        assert_eq!(<(DeviceSlice<f32>,)>::layout(), [ParamLayout { size: 16, align: 8 }]);
    }

    #[test]
    fn sixteen_arguments_pack_in_order() {
        type Sixteen = (u8, u16, u32, u64, i8, i16, i32, i64, f32, f64, u8, u16, u32, u64, i32, f64);
        let args: Sixteen = (1, 2, 3, 4, 5, 6, 7, 8, 9.0, 10.0, 11, 12, 13, 14, 15, 16.0);
        assert_eq!(<Sixteen as KernelArgs>::COUNT, 16);
        let sizes: Vec<usize> = Sixteen::layout().iter().map(|p| p.size).collect();
        assert_eq!(sizes, [1, 2, 4, 8, 1, 2, 4, 8, 4, 8, 1, 2, 4, 8, 4, 8]);
        let mut packed = args.pack();
        let pointers = Sixteen::pointers(&mut packed);
        // SAFETY: the pointer was just made from `packed.14`, an i32 alive and unmoved.
        assert_eq!(unsafe { *pointers[14].cast::<i32>() }, 15);
        // SAFETY: the pointer was just made from `packed.15`, an f64 alive and unmoved.
        assert_eq!(unsafe { *pointers[15].cast::<f64>() }, 16.0);
    }

    #[test]
    fn pointers_point_at_the_packed_values() {
        let args = (7u32, 2.5f64);
        let mut packed = args.pack();
        let mut pointers = <(u32, f64)>::pointers(&mut packed);
        let pointers = pointers.as_mut();
        // SAFETY: the pointer was just made from `packed.0`, a u32 alive and unmoved.
        assert_eq!(unsafe { *pointers[0].cast::<u32>() }, 7);
        // SAFETY: the pointer was just made from `packed.1`, an f64 alive and unmoved.
        assert_eq!(unsafe { *pointers[1].cast::<f64>() }, 2.5);
    }
}
