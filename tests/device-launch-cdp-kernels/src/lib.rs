//! CDP2 kernels for the `device-launch` tests: a parent that launches children through
//! `DL_LAUNCH_KERNEL`. Kept out of `device-launch-kernels` so that module has no dynamic
//! parallelism, which compute-sanitizer's racecheck, synccheck and initcheck do not support.
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

use cuda_graph::DevicePtr;
use device_launch::RawErrorSlot;

// kernels/cdp.cu: CDP2 kernel launches through DL_LAUNCH_KERNEL.
// SAFETY: each kernel below reads and writes its pointers only below the counts it is given
// (see kernels/*.cu). They trust those counts: this unpublished crate serves the workspace's
// tests, which pass counts no larger than the buffers.
cuda_graph::kernels! {
    /// `dl_cdp_parent(uint32_t* counters, uint32_t children, unsigned long long spin_cycles,
    /// uint32_t* accepted, DlErrorSlot* slot)`: one thread fire-and-forgets `children` child
    /// kernels (child `i` spins `spin_cycles`, then adds 1 to `counters[i]`), counting the
    /// launches accepted; failures land in `slot`.
    ///
    /// ```no_run
    /// device_launch_cdp_kernels::dl_cdp_parent().function()?;
    /// # Ok::<(), cuda_graph::CudaError>(())
    /// ```
    pub unsafe fn dl_cdp_parent(
        counters: DevicePtr<u32>,
        children: u32,
        spin_cycles: u64,
        accepted: DevicePtr<u32>,
        slot: DevicePtr<RawErrorSlot>,
    );
}

/// The kernels declared in this file against their C++ parameter types (`check_types` needs
/// no GPU: it reads the signature functions cuda-build compiled next to the kernels).
#[cfg(test)]
mod kernel_declarations {
    #[test]
    fn match_the_cpp_parameter_types() {
        assert_eq!(super::dl_cdp_parent().check_types(), Ok(()), "dl_cdp_parent");
    }
}
