//! Launch geometry: grid, block, dynamic shared memory.

use crate::error::{CudaError, Result};

/// Three dimensions of a grid or block; `Dim3::from(n)` is `(n, 1, 1)`.
///
/// ```
/// use cuda_graph::kernel::Dim3;
/// assert_eq!(Dim3::from((4, 2)), Dim3 { x: 4, y: 2, z: 1 });
/// assert_eq!(Dim3::from(8).count(), 8);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Dim3 {
    /// Extent in x.
    pub x: u32,
    /// Extent in y.
    pub y: u32,
    /// Extent in z.
    pub z: u32,
}

impl Dim3 {
    /// x * y * z.
    pub fn count(self) -> u64 {
        self.x as u64 * self.y as u64 * self.z as u64
    }
}

/// The extents as a tuple `(x, y, z)`, the form [`Refusal`](crate::Refusal)s hold them in.
///
/// ```
/// use cuda_graph::kernel::Dim3;
/// assert_eq!(<(u32, u32, u32)>::from(Dim3::from((4, 2))), (4, 2, 1));
/// ```
impl From<Dim3> for (u32, u32, u32) {
    fn from(dim: Dim3) -> (u32, u32, u32) {
        (dim.x, dim.y, dim.z)
    }
}

impl From<u32> for Dim3 {
    fn from(x: u32) -> Dim3 {
        Dim3 { x, y: 1, z: 1 }
    }
}
impl From<(u32, u32)> for Dim3 {
    fn from((x, y): (u32, u32)) -> Dim3 {
        Dim3 { x, y, z: 1 }
    }
}
impl From<(u32, u32, u32)> for Dim3 {
    fn from((x, y, z): (u32, u32, u32)) -> Dim3 {
        Dim3 { x, y, z }
    }
}

impl From<Dim3> for crate::runtime::dim3 {
    fn from(d: Dim3) -> crate::runtime::dim3 {
        crate::runtime::dim3 { x: d.x, y: d.y, z: d.z }
    }
}

/// The most threads any CUDA device runs in one block.
pub const MAX_THREADS_PER_BLOCK: u64 = 1024;

/// Grid, block and dynamic shared memory of a launch.
///
/// ```
/// use cuda_graph::kernel::LaunchConfig;
/// let config = LaunchConfig::for_elements(1000, 256);
/// assert_eq!((config.grid.x, config.block.x), (4, 256));
/// assert!(config.validate().is_ok());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LaunchConfig {
    /// Blocks in the grid.
    pub grid: Dim3,
    /// Threads in a block.
    pub block: Dim3,
    /// Dynamic shared memory per block, in bytes.
    pub shared_mem_bytes: u32,
}

impl LaunchConfig {
    /// A grid and block, no dynamic shared memory.
    pub fn new(grid: impl Into<Dim3>, block: impl Into<Dim3>) -> LaunchConfig {
        LaunchConfig { grid: grid.into(), block: block.into(), shared_mem_bytes: 0 }
    }

    /// One thread per element in 1-D blocks of `block` threads (at least one block).
    pub fn for_elements(elements: u32, block: u32) -> LaunchConfig {
        let blocks = elements.div_ceil(block.max(1)).max(1);
        LaunchConfig::new(blocks, block)
    }

    /// With `bytes` of dynamic shared memory per block.
    pub fn with_shared_mem(mut self, bytes: u32) -> LaunchConfig {
        self.shared_mem_bytes = bytes;
        self
    }

    /// Refuses what no device can launch: an empty grid or block, or more than 1024 threads
    /// per block. (Device-specific limits are CUDA's to check at launch.) The error names
    /// `LaunchConfig::validate`; the calls that take a config (launches, kernel nodes, kernel
    /// node updates) make the same check and name themselves.
    pub fn validate(&self) -> Result<()> {
        self.check("LaunchConfig::validate")
    }

    /// [`validate`](Self::validate), the error naming `call`: the public call that was given
    /// this config.
    pub(crate) fn check(&self, call: &'static str) -> Result<()> {
        if self.grid.count() == 0 || self.block.count() == 0 {
            return Err(CudaError::refused(
                call,
                crate::Refusal::EmptyLaunch { grid: self.grid.into(), block: self.block.into() },
            ));
        }
        if self.block.count() > MAX_THREADS_PER_BLOCK {
            return Err(CudaError::refused(
                call,
                crate::Refusal::BlockTooLarge {
                    block: self.block.into(),
                    threads: self.block.count(),
                    max: MAX_THREADS_PER_BLOCK,
                },
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Refusal;

    #[test]
    fn empty_and_oversized_launches_are_refused() {
        let err = LaunchConfig::new(0, 32).validate().unwrap_err();
        let empty = Refusal::EmptyLaunch { grid: (0, 1, 1), block: (32, 1, 1) };
        assert_eq!(err.refusal(), Some(&empty), "{err}");
        assert!(LaunchConfig::new(1, (32, 0)).validate().is_err());
        let err = LaunchConfig::new(1, (64, 32)).validate().unwrap_err();
        let large = Refusal::BlockTooLarge { block: (64, 32, 1), threads: 2048, max: 1024 };
        assert_eq!(err.refusal(), Some(&large), "{err}");
        assert!(LaunchConfig::new(1, 1024).validate().is_ok());
    }

    #[test]
    fn the_error_names_the_call_that_was_given_the_config() {
        let err = LaunchConfig::new(0, 32).validate().unwrap_err();
        assert!(matches!(err, CudaError::InvalidArgument { call: "LaunchConfig::validate", .. }), "{err:?}");
        let err = LaunchConfig::new(1, 2048).check("GraphBuilder::add_kernel").unwrap_err();
        assert!(
            matches!(
                err,
                CudaError::InvalidArgument {
                    call: "GraphBuilder::add_kernel",
                    reason: Refusal::BlockTooLarge { .. }
                }
            ),
            "{err:?}"
        );
    }

    #[test]
    fn for_elements_rounds_up_and_never_gives_zero_blocks() {
        assert_eq!(LaunchConfig::for_elements(257, 256).grid.x, 2);
        assert_eq!(LaunchConfig::for_elements(0, 256).grid.x, 1);
    }
}
