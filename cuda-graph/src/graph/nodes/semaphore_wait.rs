//! External semaphore wait nodes (nodes that wait on Vulkan, Direct3D or OS semaphores): known by
//! kind only. This crate adds none (they need handles of other APIs), but reads them in
//! graphs made elsewhere, and says what CUDA allows of them.

use crate::runtime as sys;

use super::{DeviceLaunchRule, Kind};

/// External semaphore wait nodes.
pub(crate) struct SemaphoreWaitSpec;

impl Kind for SemaphoreWaitSpec {
    const CODE: u32 = sys::cudaGraphNodeType::cudaGraphNodeTypeExtSemaphoreWait.0;
    const NAME: &'static str = "external semaphore wait";
    const DEVICE_LAUNCH: DeviceLaunchRule =
        DeviceLaunchRule::Refused("CUDA does not allow external semaphore nodes in device-launch graphs");
    const IN_CONDITIONAL_BODY: bool = false;
}
