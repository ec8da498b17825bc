//! How every figure is taken: the Rust path and the C++ twin measured alternately (A, B, A,
//! B, …) after a warm-up of each, medians of the samples; and the Rust side's stream, events
//! and buffers, which mirror the twin's session.

use std::time::Instant;

use cuda_graph::{CudaError, DeviceBuffer, Event, MappedBuffer, PinnedBuffer, Stream};
use cuda_graph_bench_report::{Samples, Summary};
use device_launch::ErrorSlot;

use crate::error::{BenchError, Result};

/// How many samples to take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Plan {
    /// Untimed runs of each side first (module load, first-use checks, caches, clocks).
    pub warmup: usize,
    /// Timed samples of each side, interleaved.
    pub reps: usize,
}

/// The samples of both sides of one figure.
#[derive(Debug, Clone, Default)]
pub struct Pair {
    /// The Rust path's samples.
    pub rust: Samples,
    /// The C++ twin's samples.
    pub cpp: Samples,
}

/// Runs `rust` and `cpp` `plan.warmup` times each (discarded), then `plan.reps` times each,
/// in pairs, so that drifts of clocks and temperature hit both alike; the side that goes
/// first changes from pair to pair (Rust, C++, then C++, Rust, …), so that neither side
/// always runs right after the other (whose work may leave the driver's caches warm or the
/// CPU's cold). Each call returns one sample.
pub fn interleave(
    plan: &Plan, mut rust: impl FnMut() -> Result<f64>, mut cpp: impl FnMut() -> Result<f64>,
) -> Result<Pair> {
    for index in 0..plan.warmup {
        take_pair(index, &mut rust, &mut cpp)?;
    }
    let mut pair = Pair::default();
    for index in 0..plan.reps {
        let (rust_sample, cpp_sample) = take_pair(index, &mut rust, &mut cpp)?;
        pair.rust.push(rust_sample);
        pair.cpp.push(cpp_sample);
    }
    Ok(pair)
}

/// Pair `index`'s samples, Rust's first in even pairs and C++'s first in odd ones.
fn take_pair(
    index: usize, rust: &mut impl FnMut() -> Result<f64>, cpp: &mut impl FnMut() -> Result<f64>,
) -> Result<(f64, f64)> {
    if index.is_multiple_of(2) {
        let rust_sample = rust()?;
        Ok((rust_sample, cpp()?))
    } else {
        let cpp_sample = cpp()?;
        Ok((rust()?, cpp_sample))
    }
}

/// One line of the results: an operation at one parameter, both sides.
#[derive(Debug, Clone)]
pub struct Row {
    /// What was measured, e.g. `graph replay (chain)`.
    pub operation: &'static str,
    /// Its parameter, e.g. `nodes=100`.
    pub parameter: String,
    /// The unit of the figures, e.g. `µs/node`.
    pub unit: &'static str,
    /// The samples.
    pub pair: Pair,
}

impl Row {
    /// A row from measured samples.
    pub fn new(operation: &'static str, parameter: impl Into<String>, unit: &'static str, pair: Pair) -> Row {
        Row { operation, parameter: parameter.into(), unit, pair }
    }

    /// Median of the Rust samples.
    pub fn rust(&self) -> f64 {
        self.pair.rust.median()
    }

    /// Median of the C++ samples.
    pub fn cpp(&self) -> f64 {
        self.pair.cpp.median()
    }

    /// Rust median over C++ median (1.0 is parity; above it the Rust path is slower).
    pub fn ratio(&self) -> f64 {
        self.rust() / self.cpp()
    }

    /// The row as the report reads it (and `bench.csv` holds it): each side's median, least and
    /// most sample and sample count.
    pub fn summary(&self) -> cuda_graph_bench_report::Row {
        let (rust, cpp) = (Summary::of(&self.pair.rust), Summary::of(&self.pair.cpp));
        cuda_graph_bench_report::Row::new(self.operation, self.parameter.as_str(), self.unit, rust, cpp)
    }
}

/// The Rust path's session, the twin's `TwinSession` in safe Rust: a stream, two timing
/// events, the counter kernels count into, the host-driven loop's flag (device and pinned),
/// the device schedulers' step count, and where device-side launches record failures.
pub struct RustSide {
    /// The stream everything runs on.
    pub stream: Stream,
    /// Recorded before the timed work.
    pub start: Event,
    /// Recorded after it.
    pub end: Event,
    /// What the kernels count into (one element).
    pub counter: DeviceBuffer<u32>,
    /// The host-driven loop's "go on" flag on the device.
    pub keep_going: DeviceBuffer<u32>,
    /// Its pinned host copy.
    pub keep_going_host: PinnedBuffer<u32>,
    /// The mapped-flag loop's "go on" flag, in mapped host memory the step writes directly.
    pub keep_going_mapped: MappedBuffer<u32>,
    /// The device schedulers' step count (one element).
    pub steps: DeviceBuffer<u32>,
    /// The first `cudaError_t` a device-side launch of a plain-CUDA kernel failed with (the
    /// CDP parent's child launches; the twin has its own word); 0 for none. Never reset: a
    /// failure ends the run.
    pub device_error: DeviceBuffer<i32>,
    /// Where the `device_launch.cuh` helpers record a refused device-side launch.
    pub slot: ErrorSlot,
}

impl RustSide {
    /// Creates the stream, events and buffers on the current device.
    pub fn new() -> Result<RustSide> {
        Ok(RustSide {
            stream: Stream::new()?,
            start: Event::new()?,
            end: Event::new()?,
            counter: DeviceBuffer::zeroed(1)?,
            keep_going: DeviceBuffer::zeroed(1)?,
            keep_going_host: PinnedBuffer::zeroed(1)?,
            keep_going_mapped: MappedBuffer::zeroed(1)?,
            steps: DeviceBuffer::zeroed(1)?,
            device_error: DeviceBuffer::zeroed(1)?,
            slot: ErrorSlot::new()?,
        })
    }

    /// Queues counter = 0 (untimed) and records the start event.
    pub fn begin_sample(&mut self) -> Result<()> {
        self.counter.memset_async(0, &self.stream)?;
        self.start.record(&self.stream)?;
        Ok(())
    }

    /// Records the end event, waits for it, and returns the milliseconds since the start.
    pub fn end_sample(&self) -> Result<f64> {
        self.end.record(&self.stream)?;
        self.end.synchronize()?;
        Ok(f64::from(cuda_graph::Event::elapsed_ms(&self.start, &self.end)?))
    }

    /// The counter's value (after [`end_sample`](Self::end_sample) has waited).
    pub fn counter(&self) -> Result<u32> {
        read_word(&self.counter)
    }

    /// The step count's value (after [`end_sample`](Self::end_sample) has waited).
    pub fn steps(&self) -> Result<u32> {
        read_word(&self.steps)
    }

    /// After [`end_sample`](Self::end_sample): `Ok` while no device-side launch of a
    /// plain-CUDA kernel failed, else that launch's CUDA error, as `call` (what launched).
    pub fn check_device_error(&self, call: &'static str) -> Result<()> {
        match read_word(&self.device_error)? {
            0 => Ok(()),
            code => Err(BenchError::Cuda(CudaError::from_code(code, call))),
        }
    }

    /// After [`end_sample`](Self::end_sample): `Ok` while the error slot is clear, else the
    /// refused device-side launch (the code, the helper and its line). Never cleared: a
    /// refusal ends the run.
    pub fn check_slot(&self) -> Result<()> {
        Ok(self.slot.check()??)
    }
}

fn read_word<T: cuda_graph::DeviceRepr + Default>(buffer: &DeviceBuffer<T>) -> Result<T> {
    let mut value = [T::default()];
    buffer.copy_to_host(&mut value)?;
    Ok(value[0])
}

/// Microseconds that `work` takes on the host clock, with its result.
pub fn host_us<T>(work: impl FnOnce() -> Result<T>) -> Result<(T, f64)> {
    let start = Instant::now();
    let value = work()?;
    Ok((value, start.elapsed().as_secs_f64() * 1e6))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_come_in_pairs_whose_first_side_alternates() {
        let order = std::cell::RefCell::new(Vec::new());
        let plan = Plan { warmup: 2, reps: 3 };
        let mut a = 0.0;
        let mut b = 10.0;
        let pair = interleave(
            &plan,
            || {
                order.borrow_mut().push('A');
                a += 1.0;
                Ok(a)
            },
            || {
                order.borrow_mut().push('B');
                b += 1.0;
                Ok(b)
            },
        )
        .unwrap();
        assert_eq!(order.into_inner().iter().collect::<String>(), "ABBAABBAAB", "who goes first alternates");
        assert_eq!(pair.rust.0, [3.0, 4.0, 5.0], "warm-up samples are dropped");
        assert_eq!(pair.cpp.0, [13.0, 14.0, 15.0]);
        let row = Row::new("op", "n=1", "µs", pair);
        assert_eq!((row.rust(), row.cpp()), (4.0, 14.0));
        assert!((row.ratio() - 4.0 / 14.0).abs() < 1e-12);
        let summary = row.summary();
        assert_eq!((summary.rust.range(), summary.cpp.median, summary.rust.count), ((3.0, 5.0), 14.0, 3));
        assert_eq!((summary.operation.as_str(), summary.ratio()), ("op", row.ratio()));
    }

    #[test]
    fn an_error_stops_the_measurement() {
        let plan = Plan { warmup: 0, reps: 5 };
        let mut calls = 0;
        let result = interleave(
            &plan,
            || {
                calls += 1;
                Ok(1.0)
            },
            || Err(crate::BenchError::WrongResult("boom".into())),
        );
        assert!(result.is_err());
        assert_eq!(calls, 1);
    }
}
