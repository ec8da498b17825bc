//! Stream launches go through the driver (`cuLaunchKernelEx`) when the stream's context is
//! current and no capture can record them, and through the runtime otherwise
//! (`cuda_graph::kernel`, stream launches). Whichever path a launch takes, it must run the
//! same kernel with the same arguments on the stream's device: from a thread that never used
//! CUDA (no context current: the runtime's path, which binds one, then the driver's), around
//! a capture (captured launches take the runtime's path and read back as before), with
//! launch attributes, and on two devices in turn (a kernel's function is recorded for the
//! first device's primary context; the other device's launches use its context-independent
//! handle).

use cuda_graph::graph::{CaptureMode, HostLaunch, NodeKind};
use cuda_graph::kernel::{LaunchAttributes, LaunchConfig};
use cuda_graph::{CudaError, Device, DeviceBuffer, Stream};
use gpu_test_support::require_gpu;
use test_kernels::{add_scalar, fill_pattern, increment_counter, pattern};

const N: u32 = 4096;

fn run(body: impl FnOnce() -> Result<(), CudaError>) {
    if let Err(err) = body() {
        panic!("{err}");
    }
}

#[test]
fn launches_run_from_a_thread_that_never_used_cuda() {
    require_gpu!();
    run(|| {
        let stream = Stream::new()?;
        let data = DeviceBuffer::<u32>::zeroed(N as usize)?;
        let config = LaunchConfig::for_elements(N, 256);
        std::thread::scope(|scope| {
            scope
                .spawn(|| -> Result<(), CudaError> {
                    // The first launch finds no context current on this thread; the next
                    // ones find the stream's.
                    fill_pattern().launch(&stream, config, (data.ptr(), N, 7))?;
                    for _ in 0..3 {
                        add_scalar().launch(&stream, config, (data.ptr(), N, 5))?;
                    }
                    stream.synchronize()
                })
                .join()
                .expect("the launching thread panicked")
        })?;
        let got = data.to_vec()?;
        for (i, value) in got.iter().enumerate() {
            assert_eq!(*value, pattern(i as u32, 7).wrapping_add(15), "element {i}");
        }
        Ok(())
    });
}

#[test]
fn plain_launches_around_a_capture_run_and_the_captured_one_reads_back() {
    require_gpu!();
    run(|| {
        let stream = Stream::new()?;
        let counters = DeviceBuffer::<u32>::zeroed(3)?;
        let one = LaunchConfig::new(1, 1);
        increment_counter().launch(&stream, one, (counters.ptr(), 0))?;
        let capture = stream.begin_capture(CaptureMode::ThreadLocal)?;
        increment_counter().launch(&stream, one, (counters.ptr(), 1))?;
        let graph = capture.end()?;
        increment_counter().launch(&stream, one, (counters.ptr(), 2))?;
        let nodes = graph.nodes()?;
        assert_eq!(nodes.iter().map(|n| n.kind()).collect::<Vec<_>>(), [NodeKind::Kernel]);
        assert!(graph.kernel_params(&nodes[0])?.launches(increment_counter())?);
        let exec = graph.instantiate::<HostLaunch>(Default::default())?;
        exec.launch(&stream)?;
        exec.launch(&stream)?;
        stream.synchronize()?;
        assert_eq!(counters.to_vec()?, [1, 2, 1], "plain, captured twice replayed, plain");
        Ok(())
    });
}

#[test]
fn launches_with_attributes_run_in_order() {
    require_gpu!();
    run(|| {
        let stream = Stream::new()?;
        let data = DeviceBuffer::<u32>::zeroed(N as usize)?;
        let config = LaunchConfig::for_elements(N, 256);
        let none = LaunchAttributes::default();
        let programmatic = LaunchAttributes::programmatic();
        fill_pattern().launch_with(&stream, config, &none, (data.ptr(), N, 3))?;
        add_scalar().launch_with(&stream, config, &none, (data.ptr(), N, 2))?;
        add_scalar().launch_with(&stream, config, &none, (data.ptr(), N, 4))?;
        stream.synchronize()?;
        // A programmatic launch may start before the kernel ahead of it ends, and add_scalar
        // does not wait for it: launched on an idle stream, it must still run.
        add_scalar().launch_with(&stream, config, &programmatic, (data.ptr(), N, 8))?;
        stream.synchronize()?;
        let got = data.to_vec()?;
        for (i, value) in got.iter().enumerate() {
            assert_eq!(*value, pattern(i as u32, 3).wrapping_add(14), "element {i}");
        }
        Ok(())
    });
}

#[test]
fn one_kernel_launched_on_two_devices_in_turn_runs_on_each() {
    gpu_test_support::require_gpus!(2);
    run(|| {
        let devices = [Device::get(0)?, Device::get(1)?];
        let streams = [Stream::new_on(devices[0])?, Stream::new_on(devices[1])?];
        let data = [
            DeviceBuffer::<u32>::zeroed_on(devices[0], N as usize)?,
            DeviceBuffer::zeroed_on(devices[1], N as usize)?,
        ];
        let config = LaunchConfig::for_elements(N, 256);
        let programmatic = LaunchAttributes::programmatic();
        for (side, seed) in [(1, 4), (0, 6)] {
            fill_pattern().launch(&streams[side], config, (data[side].ptr(), N, seed))?;
        }
        for round in 0..6u32 {
            for side in [round as usize % 2, 1 - round as usize % 2] {
                add_scalar().launch_with(
                    &streams[side],
                    config,
                    &programmatic,
                    (data[side].ptr(), N, 1 + side as u32),
                )?;
            }
        }
        for (side, seed) in [(0, 6), (1, 4)] {
            streams[side].synchronize()?;
            let got = data[side].to_vec()?;
            let added = 6 * (1 + side as u32);
            for (i, value) in got.iter().enumerate() {
                assert_eq!(*value, pattern(i as u32, seed).wrapping_add(added), "device {side}, element {i}");
            }
        }
        Ok(())
    });
}
