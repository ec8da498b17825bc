//! Devices, their limits, and stream priorities, on a real GPU (skipped without one).

use cuda_graph::{sys, CudaError, Device, Limit, Refusal, Stream, StreamOptions};

#[test]
fn device_zero_reports_plausible_properties() {
    gpu_test_support::require_gpu!();
    assert!(Device::count().unwrap() >= 1);
    let device = Device::get(0).unwrap();
    device.set_current().unwrap();
    assert_eq!(Device::current().unwrap(), device);
    let props = device.properties().unwrap();
    assert!(!props.name.trim().is_empty(), "{props:?}");
    assert!(props.major >= 7, "compute capability {}.{} is older than Volta", props.major, props.minor);
    assert!(props.multiprocessors > 0, "{props:?}");
    assert!(props.max_threads_per_block >= 1024, "{props:?}");
    assert!(props.max_grid_size.iter().all(|&n| n > 0), "{props:?}");
    assert!(props.max_block_dim.iter().all(|&n| n > 0), "{props:?}");
    assert!(props.shared_memory_per_block >= 48 * 1024, "{props:?}");
    assert!(props.total_global_memory > 1 << 30, "{props:?}");
    assert_eq!(props.warp_size, 32);
    assert!(props.memory_pools_supported, "{props:?}");
    assert_eq!(device.attribute_raw(sys::cudaDeviceAttr::cudaDevAttrWarpSize).unwrap(), 32);
    device.synchronize().unwrap();
}

/// Runs everywhere (no GPU needed): `count` agrees with the probe the tests skip by, and is
/// `Ok(0)` without a GPU or driver, where `get` returns CUDA's reason.
#[test]
fn count_is_zero_without_a_device_and_get_says_why() {
    match gpu_test_support::probe() {
        gpu_test_support::Probe::Present(n) => assert_eq!(Device::count().unwrap(), *n),
        gpu_test_support::Probe::Absent(why) => {
            match Device::count() {
                Ok(count) => assert_eq!(count, 0, "no device ({why}), but count is {count}"),
                // The driver's stub library stays an error (a setup to fix); the probe skips on it.
                Err(err) => assert_eq!(err.code(), Some(34), "no device ({why}), but count failed: {err}"),
            }
            let err = Device::get(0).unwrap_err();
            assert!(err.is_no_device(), "Device::get(0) without a device must say why: {err}");
            assert!(err.to_string().contains("cudaGetDeviceCount"), "{err}");
        }
    }
}

#[test]
fn the_pending_launch_limit_round_trips() {
    gpu_test_support::require_gpu!();
    let device = Device::get(0).unwrap();
    let original = device.limit(Limit::DevRuntimePendingLaunchCount).unwrap();
    assert!(original > 0, "CUDA's default is 2048, got {original}");
    let wanted = original + 1024;
    device.set_limit(Limit::DevRuntimePendingLaunchCount, wanted).unwrap();
    assert_eq!(device.limit(Limit::DevRuntimePendingLaunchCount).unwrap(), wanted);
    device.set_limit(Limit::DevRuntimePendingLaunchCount, original).unwrap();
    assert_eq!(device.limit(Limit::DevRuntimePendingLaunchCount).unwrap(), original);
}

#[test]
fn a_missing_device_is_an_error_naming_it() {
    gpu_test_support::require_gpu!();
    let count = Device::count().unwrap();
    for ordinal in [999, -1, count] {
        match Device::get(ordinal).unwrap_err() {
            CudaError::InvalidArgument { call, reason } => {
                assert_eq!(call, "Device::get");
                assert_eq!(reason, Refusal::NoSuchDevice { ordinal, count });
            }
            other => panic!("expected InvalidArgument for device {ordinal}, got {other}"),
        }
    }
}

#[test]
fn streams_take_the_priorities_of_the_device_range() {
    gpu_test_support::require_gpu!();
    Device::get(0).unwrap().set_current().unwrap();
    let (least, greatest) = Stream::priority_range().unwrap();
    assert!(greatest <= least, "lower numbers are higher priorities: ({least}, {greatest})");
    assert!(greatest < least, "an H100 offers more than one priority: ({least}, {greatest})");

    let urgent =
        Stream::with_options(StreamOptions { non_blocking: true, priority: Some(greatest) }).unwrap();
    assert_eq!(urgent.priority().unwrap(), greatest);
    let relaxed = Stream::with_options(StreamOptions { non_blocking: false, priority: Some(least) }).unwrap();
    assert_eq!(relaxed.priority().unwrap(), least);
    let default = Stream::new().unwrap();
    let priority = default.priority().unwrap();
    assert!((greatest..=least).contains(&priority), "{priority} outside ({least}, {greatest})");

    // Out-of-range requests are clamped by CUDA, not refused.
    let clamped =
        Stream::with_options(StreamOptions { non_blocking: false, priority: Some(greatest - 100) }).unwrap();
    assert_eq!(clamped.priority().unwrap(), greatest);

    for stream in [&urgent, &relaxed, &default, &clamped] {
        stream.synchronize().unwrap();
        assert!(stream.is_idle().unwrap());
    }
}
