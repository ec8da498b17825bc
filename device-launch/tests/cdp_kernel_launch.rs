//! CDP2 kernel launches through `DL_LAUNCH_KERNEL`: every child launched by a parent kernel
//! runs, and the launches it accepted are counted on the device.

mod support;

use cuda_graph::DeviceBuffer;
use device_launch::ErrorSlot;
use device_launch_cdp_kernels::dl_cdp_parent;
use gpu_test_support::require_gpu;
use support::{one, run, stream};

#[test]
fn every_child_a_parent_launches_runs_once() {
    require_gpu!();
    run(|| {
        let children = 100u32;
        let stream = stream()?;
        let counters = DeviceBuffer::<u32>::zeroed(children as usize)?;
        let accepted = DeviceBuffer::<u32>::zeroed(1)?;
        let slot = ErrorSlot::new()?;
        dl_cdp_parent().launch(
            &stream,
            one(),
            (counters.ptr(), children, 1000, accepted.ptr(), slot.ptr()),
        )?;
        stream.synchronize()?;
        slot.check()??;
        assert_eq!(accepted.to_vec()?, [children]);
        assert_eq!(counters.to_vec()?, vec![1; children as usize]);
        Ok(())
    });
}
