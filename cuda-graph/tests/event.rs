//! Events: completion, timing, and ordering streams after one another, on a real GPU (skipped
//! without one).

use std::sync::mpsc;
use std::time::Duration;

use cuda_graph::kernel::LaunchConfig;
use cuda_graph::{Device, DeviceBuffer, Event, EventOptions, PinnedBuffer, Stream};
use test_kernels::{fill_pattern_after_spin, pattern};

/// Faster than any GPU's SM clock: a kernel that spins `c` clock cycles takes at least
/// `c / MAX_SM_CLOCK_HZ` seconds on every device.
const MAX_SM_CLOCK_HZ: f64 = 3.0e9;

/// No host-to-device copy moves more than this (bytes per second; PCIe 5 x16 is 64e9, NVLink-C2C
/// 450e9): a lower bound on the time of a copy of known size.
const MAX_COPY_BYTES_PER_S: f64 = 1.0e12;

/// Seeded xorshift64: reproducible, and never zero from a non-zero state.
fn random_u32(len: usize, seed: u64) -> Vec<u32> {
    let mut state = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 16) as u32
        })
        .collect()
}

fn setup() {
    Device::get(0).unwrap().set_current().unwrap();
}

/// Queues a host function that blocks `stream` until the returned sender is used (or 10 s).
fn gate(stream: &Stream) -> mpsc::Sender<()> {
    let (open, opened) = mpsc::channel::<()>();
    stream
        .launch_host_fn(move || {
            let _ = opened.recv_timeout(Duration::from_secs(10));
        })
        .unwrap();
    open
}

#[test]
fn timing_is_positive_and_ordered_across_two_streams() {
    gpu_test_support::require_gpu!();
    setup();
    let (producer, consumer) = (Stream::new().unwrap(), Stream::new().unwrap());
    let len = 16 << 20; // 64 MiB of u32
    let data = random_u32(len, 7);
    assert!(data.iter().any(|&x| x != 0));
    let source = PinnedBuffer::from_slice(&data).unwrap();
    let mut staged = DeviceBuffer::<u32>::zeroed(len).unwrap();
    let mut forwarded = DeviceBuffer::<u32>::zeroed(len).unwrap();
    let mut result = PinnedBuffer::<u32>::zeroed(len).unwrap();
    let (start, staged_done, end) = (Event::new().unwrap(), Event::new().unwrap(), Event::new().unwrap());

    start.record(&producer).unwrap();
    staged.copy_from_pinned_async(&source, &producer).unwrap();
    staged_done.record(&producer).unwrap();
    // The consumer may copy onward only once the producer's copy has landed.
    consumer.wait_event(&staged_done).unwrap();
    forwarded.copy_from_device_async(&staged, &consumer).unwrap();
    forwarded.copy_to_pinned_async(&mut result, &consumer).unwrap();
    end.record(&consumer).unwrap();

    end.synchronize().unwrap();
    for event in [&start, &staged_done, &end] {
        assert!(event.is_complete().unwrap());
    }
    let upload = Event::elapsed_ms(&start, &staged_done).unwrap();
    let onward = Event::elapsed_ms(&staged_done, &end).unwrap();
    let total = Event::elapsed_ms(&start, &end).unwrap();
    assert!(upload > 0.0, "64 MiB host-to-device copy took {upload} ms");
    assert!(onward > 0.0, "64 MiB device copy and download took {onward} ms");
    assert!(total >= upload && total >= onward, "total {total}, upload {upload}, onward {onward}");
    // Lower bounds from the bytes moved: these fail when the events do not bracket the copies
    // (a sum of differences of the same timestamps would hold whatever they measured).
    let least_ms = |bytes: f64| bytes / MAX_COPY_BYTES_PER_S * 1e3;
    let bytes = (len * 4) as f64;
    assert!(f64::from(upload) >= least_ms(bytes), "64 MiB uploaded in {upload} ms: faster than possible");
    assert!(f64::from(onward) >= least_ms(bytes), "64 MiB downloaded in {onward} ms: faster than possible");

    let got = result.as_slice().unwrap();
    for (index, (got, want)) in got.iter().zip(&data).enumerate() {
        assert_eq!(got, want, "element {index}: the consumer ran before the producer's copy finished?");
    }
}

/// Elapsed times between events around kernels that spin a known number of clock cycles are at
/// least those cycles at a clock faster than any GPU's: a check that fails when the events do
/// not bracket the work (recorded too early, timed on the wrong clock or in the wrong unit).
/// Events recorded in order also give non-negative times that add up (within the timer's
/// resolution, about half a microsecond).
#[test]
fn elapsed_time_covers_kernels_of_known_length() {
    gpu_test_support::require_gpu!();
    setup();
    let stream = Stream::new().unwrap();
    let n = 64u32;
    let out = DeviceBuffer::<u32>::zeroed(n as usize).unwrap();
    let events = [Event::new().unwrap(), Event::new().unwrap(), Event::new().unwrap()];
    // At most 3 GHz: at least 50 ms, then at least 100 ms (about 1.5 times that on an H100).
    let cycles = [150_000_000u64, 300_000_000u64];
    fill_pattern_after_spin().function().unwrap();
    events[0].record(&stream).unwrap();
    fill_pattern_after_spin()
        .launch(&stream, LaunchConfig::for_elements(n, 64), (out.ptr(), n, 1, cycles[0]))
        .unwrap();
    events[1].record(&stream).unwrap();
    fill_pattern_after_spin()
        .launch(&stream, LaunchConfig::for_elements(n, 64), (out.ptr(), n, 2, cycles[1]))
        .unwrap();
    events[2].record(&stream).unwrap();
    events[2].synchronize().unwrap();

    let first = f64::from(Event::elapsed_ms(&events[0], &events[1]).unwrap());
    let second = f64::from(Event::elapsed_ms(&events[1], &events[2]).unwrap());
    let both = f64::from(Event::elapsed_ms(&events[0], &events[2]).unwrap());
    let least_ms = |c: u64| c as f64 / MAX_SM_CLOCK_HZ * 1e3;
    assert!(first >= least_ms(cycles[0]), "{} cycles timed as {first} ms", cycles[0]);
    assert!(second >= least_ms(cycles[1]), "{} cycles timed as {second} ms", cycles[1]);
    assert!(both >= least_ms(cycles[0] + cycles[1]), "both kernels timed as {both} ms");
    assert!(first >= 0.0 && second >= 0.0, "events in order: {first} ms, {second} ms");
    assert!((both - (first + second)).abs() <= 0.002, "{both} ms != {first} + {second} ms");
    let want: Vec<u32> = (0..n).map(|i| pattern(i, 2)).collect();
    assert_eq!(out.to_vec().unwrap(), want, "the second kernel ran to its end");
}

#[test]
fn is_complete_follows_the_stream() {
    gpu_test_support::require_gpu!();
    setup();
    let stream = Stream::new().unwrap();
    let event = Event::new().unwrap();
    assert!(event.is_complete().unwrap(), "an event never recorded is complete");
    let open = gate(&stream);
    event.record(&stream).unwrap();
    assert!(!event.is_complete().unwrap(), "the stream is held at the gate");
    open.send(()).unwrap();
    event.synchronize().unwrap();
    assert!(event.is_complete().unwrap());
    stream.synchronize().unwrap();
}

#[test]
fn elapsed_time_needs_finished_timing_events() {
    gpu_test_support::require_gpu!();
    setup();
    let stream = Stream::new().unwrap();
    let (start, end) = (Event::new().unwrap(), Event::new().unwrap());
    start.record(&stream).unwrap();
    let open = gate(&stream);
    end.record(&stream).unwrap();
    let pending = Event::elapsed_ms(&start, &end).unwrap_err();
    assert_eq!(pending.code(), Some(600), "cudaErrorNotReady expected, got {pending}");
    open.send(()).unwrap();
    end.synchronize().unwrap();
    assert!(Event::elapsed_ms(&start, &end).unwrap() >= 0.0);

    let untimed = Event::with_options(EventOptions { timing: false, blocking_sync: false }).unwrap();
    untimed.record(&stream).unwrap();
    untimed.synchronize().unwrap();
    let err = Event::elapsed_ms(&start, &untimed).unwrap_err();
    assert!(err.code().is_some(), "{err}");
    assert!(err.to_string().starts_with("cudaEventElapsedTime failed"), "{err}");
}

#[test]
fn blocking_sync_events_and_unrecorded_waits_work() {
    gpu_test_support::require_gpu!();
    setup();
    let stream = Stream::new().unwrap();
    let blocking = Event::with_options(EventOptions { timing: false, blocking_sync: true }).unwrap();
    let never_recorded = Event::new().unwrap();
    stream.wait_event(&never_recorded).unwrap();
    let mut buffer = DeviceBuffer::<u8>::zeroed(1 << 20).unwrap();
    buffer.memset_async(0x5a, &stream).unwrap();
    blocking.record(&stream).unwrap();
    blocking.synchronize().unwrap();
    assert!(blocking.is_complete().unwrap());
    assert!(!blocking.as_raw().is_null());
    assert!(buffer.to_vec().unwrap().iter().all(|&b| b == 0x5a));
}

#[test]
fn events_work_from_other_threads() {
    gpu_test_support::require_gpu!();
    setup();
    let stream = Stream::new().unwrap();
    let event = Event::new().unwrap();
    let open = gate(&stream);
    event.record(&stream).unwrap();
    let waiter = std::thread::spawn(move || {
        event.synchronize().unwrap();
        event.is_complete().unwrap()
    });
    open.send(()).unwrap();
    assert!(waiter.join().unwrap());
    stream.synchronize().unwrap();
}
