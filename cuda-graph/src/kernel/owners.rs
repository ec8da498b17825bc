//! What a kernel launch or node keeps alive, and where it may run: the one place that collects
//! the owners of a launch of a kernel (each argument's allocations and the kernel's module)
//! and checks them against the device that runs it. Stream launches, captured launches,
//! kernel nodes (with or without attributes) and per-node setters all go through it, so no
//! path keeps less than another or checks less.

use super::{Kernel, KernelArgs};
use crate::device::Device;
use crate::error::{CudaError, Result};
use crate::memory::KeepAlive;

/// Everything a kernel node, a setter or a captured launch of `kernel` with `args` on
/// `device` must keep for as long as it can run: each argument's allocations and the kernel's
/// module (a kernel loaded at run time), after [`check_placement`].
pub(crate) fn kernel_owners<A: KernelArgs>(
    call: &'static str, kernel: &Kernel<A>, args: &A, device: Device,
) -> Result<Vec<KeepAlive>> {
    let mut owners = Vec::new();
    args.keep_alive(&mut owners);
    check_placement(call, args, &owners, device)?;
    owners.extend(kernel.owner());
    Ok(owners)
}

/// Refuses, for `call`, an argument bound to another device than `device`
/// ([`KernelParam::device`](super::KernelParam::device): a device-launch exec handle) and
/// memory among `owners` that `device` cannot reach (another device's, without peer or pool
/// access), naming both devices.
pub(crate) fn check_placement<A: KernelArgs>(
    call: &'static str, args: &A, owners: &[KeepAlive], device: Device,
) -> Result<()> {
    let mut other = None;
    args.bound_devices(&mut |bound| {
        if bound != device {
            other.get_or_insert(bound);
        }
    });
    if let Some(bound) = other {
        return Err(CudaError::refused(
            call,
            crate::Refusal::DevicesDiffer {
                pair: crate::refusal::DevicePair::ArgumentAndKernel,
                first: bound.ordinal(),
                second: device.ordinal(),
            },
        ));
    }
    crate::memory::check_owners_on(owners, device, call)
}
