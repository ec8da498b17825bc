//! The element types NCCL reduces and the reduction operations.

use cuda_graph::DeviceRepr;
use cudarc::nccl::sys;

mod sealed {
    pub trait Sealed {}
}

/// An element type NCCL knows (`ncclDataType_t`): `i8`, `u8`, `i32`, `u32`, `i64`, `u64`,
/// `f32`, `f64`. Sealed: NCCL reads these bits as that type.
///
/// ```
/// use cuda_graph_nccl::NcclType;
/// fn element_name<T: NcclType>() -> &'static str { T::NAME }
/// assert_eq!(element_name::<f32>(), "f32");
/// ```
pub trait NcclType: DeviceRepr + sealed::Sealed {
    /// NCCL's name for the type.
    const TYPE: sys::ncclDataType_t;
    /// The Rust name, for errors.
    const NAME: &'static str;
}

macro_rules! nccl_types {
    ($($rust:ty => $nccl:ident),* $(,)?) => {$(
        impl sealed::Sealed for $rust {}
        impl NcclType for $rust {
            const TYPE: sys::ncclDataType_t = sys::ncclDataType_t::$nccl;
            const NAME: &'static str = stringify!($rust);
        }
    )*};
}

nccl_types! {
    i8 => ncclInt8,
    u8 => ncclUint8,
    i32 => ncclInt32,
    u32 => ncclUint32,
    i64 => ncclInt64,
    u64 => ncclUint64,
    f32 => ncclFloat32,
    f64 => ncclFloat64,
}

/// How a reduction combines the ranks' elements (`ncclRedOp_t`).
///
/// ```
/// use cuda_graph_nccl::ReduceOp;
/// assert_eq!(ReduceOp::Sum.apply(2.0f64, 3.0), 5.0);
/// assert_eq!(ReduceOp::Max.apply(2, 3), 3);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    /// The sum.
    Sum,
    /// The product.
    Prod,
    /// The largest.
    Max,
    /// The smallest.
    Min,
    /// The sum divided by the number of ranks (NCCL divides in the element type).
    Avg,
}

impl ReduceOp {
    pub(crate) fn raw(self) -> sys::ncclRedOp_t {
        match self {
            ReduceOp::Sum => sys::ncclRedOp_t::ncclSum,
            ReduceOp::Prod => sys::ncclRedOp_t::ncclProd,
            ReduceOp::Max => sys::ncclRedOp_t::ncclMax,
            ReduceOp::Min => sys::ncclRedOp_t::ncclMin,
            ReduceOp::Avg => sys::ncclRedOp_t::ncclAvg,
        }
    }

    /// Combines two values on the host as the operation does (`Avg` combines as a sum; the
    /// division by the number of ranks comes last): for checking results on the CPU.
    pub fn apply<T: PartialOrd + std::ops::Add<Output = T> + std::ops::Mul<Output = T>>(
        self, a: T, b: T,
    ) -> T {
        match self {
            ReduceOp::Sum | ReduceOp::Avg => a + b,
            ReduceOp::Prod => a * b,
            ReduceOp::Max => {
                if a >= b {
                    a
                } else {
                    b
                }
            }
            ReduceOp::Min => {
                if a <= b {
                    a
                } else {
                    b
                }
            }
        }
    }
}
