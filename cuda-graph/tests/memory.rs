//! Device, pinned and pool memory, and every kind of copy between them, on a real GPU
//! (skipped without one).

use std::fmt::Debug;

use cuda_graph::{
    sys, CudaError, Device, DeviceBuffer, DeviceRepr, MemoryPool, MemoryPoolOptions, PinnedBuffer, Refusal,
    Stream, StreamOptions,
};

/// Seeded xorshift64: reproducible, and never zero from a non-zero state.
struct XorShift(u64);

impl XorShift {
    fn new(seed: u64) -> XorShift {
        XorShift(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }

    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }
}

fn random<T>(len: usize, seed: u64, make: impl Fn(u64) -> T) -> Vec<T> {
    let mut rng = XorShift::new(seed);
    (0..len).map(|_| make(rng.next())).collect()
}

fn assert_same<T: PartialEq + Debug>(got: &[T], want: &[T], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    let len = want.len();
    for (index, (got, want)) in got.iter().zip(want).enumerate() {
        assert_eq!(got, want, "{what}: element {index} of {len}");
    }
}

fn setup() -> Stream {
    Device::get(0).unwrap().set_current().unwrap();
    Stream::new().unwrap()
}

/// Host → pinned → device → device → pinned and host → device → host, element by element.
fn round_trip_every_copy_kind<T: DeviceRepr + PartialEq + Debug + Default>(data: &[T], what: &str) {
    assert!(data.iter().any(|x| *x != T::default()), "{what}: test data must not be all zero");
    let stream = setup();
    let len = data.len();

    let staging = PinnedBuffer::from_slice(data).unwrap();
    assert_same(&staging.as_slice().unwrap(), data, what);
    let mut first = DeviceBuffer::<T>::zeroed(len).unwrap();
    first.copy_from_pinned_async(&staging, &stream).unwrap();
    let mut second = DeviceBuffer::<T>::zeroed(len).unwrap();
    second.copy_from_device_async(&first, &stream).unwrap();
    let mut back = PinnedBuffer::<T>::zeroed(len).unwrap();
    second.copy_to_pinned_async(&mut back, &stream).unwrap();
    // No synchronize: reading the pinned buffer waits for the copy into it.
    assert_same(&back.as_slice().unwrap(), data, &format!("{what}, async path"));
    assert_same(&back.to_vec().unwrap(), data, &format!("{what}, async path to_vec"));

    let synchronous = DeviceBuffer::from_slice(data).unwrap();
    assert_same(&synchronous.to_vec().unwrap(), data, &format!("{what}, synchronous to_vec"));
    let mut host = vec![T::default(); len];
    synchronous.copy_to_host(&mut host).unwrap();
    assert_same(&host, data, &format!("{what}, synchronous copy_to_host"));
    let mut rewritten = DeviceBuffer::<T>::zeroed(len).unwrap();
    rewritten.copy_from_host(data).unwrap();
    assert_same(&rewritten.to_vec().unwrap(), data, &format!("{what}, synchronous copy_from_host"));
    stream.synchronize().unwrap();
}

#[test]
fn every_copy_kind_round_trips_u8_with_odd_lengths() {
    gpu_test_support::require_gpu!();
    for (len, seed) in [(1, 1), (3, 2), (4099, 3), ((1 << 20) + 7, 4)] {
        let data = random(len, seed, |x| (x >> 24) as u8 | 1);
        round_trip_every_copy_kind(&data, &format!("u8 x {len}"));
    }
}

#[test]
fn every_copy_kind_round_trips_u32_and_u64() {
    gpu_test_support::require_gpu!();
    round_trip_every_copy_kind(&random(1 << 20, 11, |x| x as u32), "u32");
    round_trip_every_copy_kind(&random(123_457, 12, |x| x), "u64");
    round_trip_every_copy_kind(&random(1001, 13, |x| x as i64), "i64");
}

#[test]
fn every_copy_kind_round_trips_floats_and_arrays() {
    gpu_test_support::require_gpu!();
    round_trip_every_copy_kind(&random(65_537, 21, |x| (x >> 40) as f32 / 1024.0 - 8192.0), "f32");
    round_trip_every_copy_kind(&random(65_536, 22, |x| (x >> 11) as f64 * 1e-6), "f64");
    round_trip_every_copy_kind(
        &random(4097, 23, |x| [x as u16, (x >> 16) as u16, (x >> 32) as u16]),
        "[u16; 3]",
    );
}

#[test]
fn memset_async_sets_every_byte() {
    gpu_test_support::require_gpu!();
    let stream = setup();
    let data = random(100_003, 31, |x| x as u32);
    let mut words = DeviceBuffer::from_slice(&data).unwrap();
    words.memset_async(0xa5, &stream).unwrap();
    let mut out = PinnedBuffer::<u32>::zeroed(words.len()).unwrap();
    words.copy_to_pinned_async(&mut out, &stream).unwrap();
    assert_same(&out.as_slice().unwrap(), &vec![0xa5a5_a5a5; data.len()], "memset 0xa5");

    words.memset_async(0, &stream).unwrap();
    stream.synchronize().unwrap();
    assert_same(&words.to_vec().unwrap(), &vec![0; data.len()], "memset 0");

    let mut bytes = DeviceBuffer::<u8>::zeroed(7).unwrap();
    bytes.memset_async(0xff, &stream).unwrap();
    stream.synchronize().unwrap();
    assert_eq!(bytes.to_vec().unwrap(), [0xff; 7]);
}

#[test]
fn zero_length_buffers_accept_every_operation() {
    gpu_test_support::require_gpu!();
    let stream = setup();
    let pool = MemoryPool::new(MemoryPoolOptions::default()).unwrap();
    let mut device = DeviceBuffer::<u32>::zeroed(0).unwrap();
    let empty_source = DeviceBuffer::<u32>::from_slice(&[]).unwrap();
    let mut pinned = PinnedBuffer::<u32>::zeroed(0).unwrap();
    let mut stream_ordered = DeviceBuffer::<u32>::alloc_async(0, &stream).unwrap();
    let from_pool = DeviceBuffer::<u32>::alloc_from_pool_async(0, &pool, &stream).unwrap();
    for buffer in [&device, &empty_source, &stream_ordered, &from_pool] {
        assert!(buffer.is_empty());
        assert_eq!(buffer.bytes(), 0);
        assert!(buffer.to_vec().unwrap().is_empty());
    }
    device.copy_from_pinned_async(&pinned, &stream).unwrap();
    device.copy_to_pinned_async(&mut pinned, &stream).unwrap();
    device.copy_from_device_async(&empty_source, &stream).unwrap();
    device.memset_async(7, &stream).unwrap();
    stream_ordered.copy_from_device_async(&from_pool, &stream).unwrap();
    device.copy_from_host(&[]).unwrap();
    device.copy_to_host(&mut []).unwrap();
    assert!(pinned.as_slice().unwrap().is_empty());
    assert!(pinned.as_mut_slice().unwrap().is_empty());
    assert!(PinnedBuffer::<u8>::from_slice(&[]).unwrap().is_empty());
    stream.synchronize().unwrap();
    drop((device, empty_source, pinned, stream_ordered, from_pool));
    assert_eq!(pool.used_bytes().unwrap(), 0);
}

fn expect_length_error(result: cuda_graph::Result<()>, call: &str) {
    match result {
        Err(CudaError::InvalidArgument { call: got, reason }) => {
            assert_eq!(got, call);
            assert!(matches!(reason, Refusal::LengthMismatch(_)), "{reason}");
        }
        other => panic!("{call}: expected a length error, got {other:?}"),
    }
}

#[test]
fn mismatched_lengths_are_refused_before_any_copy() {
    gpu_test_support::require_gpu!();
    let stream = setup();
    let mut device = DeviceBuffer::from_slice(&[1u32, 2, 3, 4]).unwrap();
    let longer = DeviceBuffer::<u32>::zeroed(5).unwrap();
    let shorter_pinned = PinnedBuffer::from_slice(&[9u32, 9, 9]).unwrap();
    let mut longer_pinned = PinnedBuffer::<u32>::zeroed(5).unwrap();
    let empty = PinnedBuffer::<u32>::zeroed(0).unwrap();

    expect_length_error(
        device.copy_from_pinned_async(&shorter_pinned, &stream),
        "DeviceBuffer::copy_from_pinned_async",
    );
    expect_length_error(
        device.copy_from_pinned_async(&empty, &stream),
        "DeviceBuffer::copy_from_pinned_async",
    );
    expect_length_error(
        device.copy_to_pinned_async(&mut longer_pinned, &stream),
        "DeviceBuffer::copy_to_pinned_async",
    );
    expect_length_error(
        device.copy_from_device_async(&longer, &stream),
        "DeviceBuffer::copy_from_device_async",
    );
    expect_length_error(device.copy_from_host(&[1, 2]), "DeviceBuffer::copy_from_host");
    expect_length_error(device.copy_to_host(&mut [0; 9]), "DeviceBuffer::copy_to_host");

    stream.synchronize().unwrap();
    assert_eq!(device.to_vec().unwrap(), [1, 2, 3, 4], "refused copies must not have touched the buffer");
    assert_eq!(longer_pinned.as_slice().unwrap(), [0; 5]);
}

#[test]
fn pinned_buffers_wait_for_the_copies_that_use_them() {
    gpu_test_support::require_gpu!();
    let stream = setup();
    let len = 16 << 20; // 64 MiB of u32: the copy takes long enough to be in flight
    let data = random(len, 41, |x| x as u32);

    // Writing a pinned buffer waits for the copy that reads it.
    let mut source = PinnedBuffer::from_slice(&data).unwrap();
    let mut device = DeviceBuffer::<u32>::zeroed(len).unwrap();
    device.copy_from_pinned_async(&source, &stream).unwrap();
    source.as_mut_slice().unwrap().fill(0);
    stream.synchronize().unwrap();
    assert_same(&device.to_vec().unwrap(), &data, "device copy of a pinned buffer overwritten right after");

    // Reading a pinned buffer waits for the copy that writes it.
    let mut target = PinnedBuffer::<u32>::zeroed(len).unwrap();
    device.copy_to_pinned_async(&mut target, &stream).unwrap();
    assert_same(&target.as_slice().unwrap(), &data, "pinned buffer read right after the copy into it");

    // Dropping a pinned buffer waits for the copy that reads it.
    let dropped = PinnedBuffer::from_slice(&data).unwrap();
    let mut landing = DeviceBuffer::<u32>::zeroed(len).unwrap();
    landing.copy_from_pinned_async(&dropped, &stream).unwrap();
    let owner = dropped.keep_alive();
    drop(dropped);
    drop(owner);
    stream.synchronize().unwrap();
    assert_same(&landing.to_vec().unwrap(), &data, "copy from a pinned buffer dropped while in flight");
    let errors = cuda_graph::take_unreported_errors();
    assert!(errors.is_empty(), "{errors:?}");
}

#[test]
fn a_pool_counts_what_stream_ordered_buffers_use() {
    gpu_test_support::require_gpu!();
    let stream = setup();
    let pool =
        MemoryPool::new(MemoryPoolOptions { release_threshold: u64::MAX, ..Default::default() }).unwrap();
    assert_eq!(pool.release_threshold().unwrap(), u64::MAX);
    assert_eq!(pool.device_ordinal(), 0);
    assert_eq!((pool.used_bytes().unwrap(), pool.reserved_bytes().unwrap()), (0, 0), "a new pool is empty");

    let len = 1 << 20;
    let bytes = (len * 4) as u64;
    let mut buffer = DeviceBuffer::<u32>::alloc_from_pool_async(len, &pool, &stream).unwrap();
    stream.synchronize().unwrap();
    let (used, reserved) = (pool.used_bytes().unwrap(), pool.reserved_bytes().unwrap());
    assert!(used >= bytes, "used {used} < {bytes}");
    assert!(reserved >= used, "reserved {reserved} < used {used}");

    // The memory is usable on its stream.
    let data = random(len, 51, |x| (x >> 3) as u32);
    let staging = PinnedBuffer::from_slice(&data).unwrap();
    buffer.copy_from_pinned_async(&staging, &stream).unwrap();
    let mut copy = DeviceBuffer::<u32>::alloc_from_pool_async(len, &pool, &stream).unwrap();
    copy.copy_from_device_async(&buffer, &stream).unwrap();
    let mut back = PinnedBuffer::<u32>::zeroed(len).unwrap();
    copy.copy_to_pinned_async(&mut back, &stream).unwrap();
    assert_same(&back.as_slice().unwrap(), &data, "pool memory round trip");
    assert!(pool.used_bytes().unwrap() >= 2 * bytes);

    // Freed in stream order; the release threshold keeps the reservation until trimmed.
    drop((buffer, copy));
    Device::get(0).unwrap().synchronize().unwrap();
    assert_eq!(pool.used_bytes().unwrap(), 0);
    let kept = pool.reserved_bytes().unwrap();
    assert!(kept >= bytes, "threshold u64::MAX keeps the reservation, got {kept}");
    pool.trim_to(0).unwrap();
    assert!(pool.reserved_bytes().unwrap() < kept, "trim_to(0) released nothing");
    let errors = cuda_graph::take_unreported_errors();
    assert!(errors.is_empty(), "{errors:?}");
}

#[test]
fn the_default_pool_serves_alloc_async() {
    gpu_test_support::require_gpu!();
    let stream = setup();
    let pool = MemoryPool::device_default(Device::get(0).unwrap()).unwrap();
    assert!(
        pool.reuses_only_completed_frees().unwrap(),
        "the crate's pool must not reuse frees still pending"
    );
    pool.set_release_threshold(u64::MAX).unwrap();
    assert_eq!(pool.release_threshold().unwrap(), u64::MAX);
    let before = pool.used_bytes().unwrap();
    let len = 2 << 20;
    let mut buffer = DeviceBuffer::<u32>::alloc_async(len, &stream).unwrap();
    buffer.memset_async(0x3c, &stream).unwrap();
    stream.synchronize().unwrap();
    let used = pool.used_bytes().unwrap();
    assert!(used >= before + (len * 4) as u64, "used {used}, before {before}");
    assert!(pool.reserved_bytes().unwrap() >= used);
    assert_same(&buffer.to_vec().unwrap(), &vec![0x3c3c_3c3c; len], "default-pool memory");
    drop(buffer);
    pool.set_release_threshold(0).unwrap();
}

#[test]
fn buffers_from_non_blocking_streams_are_freed_after_their_work() {
    gpu_test_support::require_gpu!();
    Device::get(0).unwrap().set_current().unwrap();
    let stream = Stream::with_options(StreamOptions { non_blocking: true, priority: None }).unwrap();
    let pool = MemoryPool::new(MemoryPoolOptions::default()).unwrap();
    let len = 4 << 20;
    let data = random(len, 61, |x| x as u32);
    let staging = PinnedBuffer::from_slice(&data).unwrap();
    let mut result = PinnedBuffer::<u32>::zeroed(len).unwrap();
    {
        let mut buffer = DeviceBuffer::<u32>::alloc_from_pool_async(len, &pool, &stream).unwrap();
        buffer.copy_from_pinned_async(&staging, &stream).unwrap();
        buffer.copy_to_pinned_async(&mut result, &stream).unwrap();
        // Dropped with both copies possibly in flight: the drop waits for the device.
    }
    assert_same(&result.as_slice().unwrap(), &data, "copy through a buffer dropped in flight");
    // The free itself is stream-ordered: the pool counts the memory as free once it has run.
    Device::get(0).unwrap().synchronize().unwrap();
    assert_eq!(pool.used_bytes().unwrap(), 0);
    let errors = cuda_graph::take_unreported_errors();
    assert!(errors.is_empty(), "{errors:?}");
}

#[test]
fn async_work_is_refused_on_a_capturing_stream() {
    gpu_test_support::require_gpu!();
    Device::get(0).unwrap().set_current().unwrap();
    // Non-blocking, so that the capture does not interfere with other tests' legacy-stream work.
    let stream = Stream::with_options(StreamOptions { non_blocking: true, priority: None }).unwrap();
    let mut device = DeviceBuffer::<u32>::zeroed(8).unwrap();
    let source = DeviceBuffer::<u32>::zeroed(8).unwrap();
    let pinned = PinnedBuffer::<u32>::zeroed(8).unwrap();

    // SAFETY: the stream is alive; relaxed mode restricts nothing on other threads.
    let begin = unsafe {
        sys::cudaStreamBeginCapture(stream.as_raw(), sys::cudaStreamCaptureMode::cudaStreamCaptureModeRelaxed)
    };
    assert_eq!(begin, sys::cudaError::cudaSuccess);
    let refusals = [
        device.copy_from_device_async(&source, &stream).err(),
        device.copy_from_pinned_async(&pinned, &stream).err(),
        device.memset_async(1, &stream).err(),
        DeviceBuffer::<u32>::alloc_async(8, &stream).err(),
        stream.launch_host_fn(|| {}).err(),
    ];
    let mut graph = std::ptr::null_mut();
    // SAFETY: the stream is capturing (relaxed mode, this thread); `graph` is an out-pointer.
    let end = unsafe { sys::cudaStreamEndCapture(stream.as_raw(), &mut graph) };
    assert_eq!(end, sys::cudaError::cudaSuccess);
    // SAFETY: the capture produced this graph; it is destroyed once.
    assert_eq!(unsafe { sys::cudaGraphDestroy(graph) }, sys::cudaError::cudaSuccess);

    for (index, refusal) in refusals.into_iter().enumerate() {
        match refusal {
            Some(CudaError::InvalidArgument { reason, .. }) => assert!(
                matches!(reason, Refusal::CapturedElsewhere | Refusal::NotCapturable),
                "{index}: {reason}"
            ),
            other => panic!("operation {index}: expected a capture refusal, got {other:?}"),
        }
    }
    device.copy_from_device_async(&source, &stream).unwrap();
    stream.synchronize().unwrap();
}
