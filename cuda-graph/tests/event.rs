//! Events: completion, timing, and ordering streams after one another, on a real GPU (skipped
//! without one).

use std::sync::mpsc;
use std::time::Duration;

use cuda_graph::{Device, DeviceBuffer, Event, EventOptions, PinnedBuffer, Stream};

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
    assert!((total - (upload + onward)).abs() <= 0.01 * total + 0.01, "{total} != {upload} + {onward}");

    let got = result.as_slice().unwrap();
    for (index, (got, want)) in got.iter().zip(&data).enumerate() {
        assert_eq!(got, want, "element {index}: the consumer ran before the producer's copy finished?");
    }
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
