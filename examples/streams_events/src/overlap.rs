//! Copy/compute overlap: the data goes through in chunks (copy in, compute, copy out), chunk
//! `c` on stream `c % S`. With one stream every step waits for the one before; with several,
//! one chunk's copy in, another's kernel and a third's copy out run at once (the copy engines
//! and the SMs are separate hardware).

use cuda_graph::{DeviceBuffer, Event, PinnedBuffer, Result, Stream, StreamOptions};

use crate::work::{launch, Table};

/// One chunk's buffers: pinned host input and output, device input and output.
struct Chunk {
    pin_in: PinnedBuffer<u32>,
    pin_out: PinnedBuffer<u32>,
    dev_in: DeviceBuffer<u32>,
    dev_out: DeviceBuffer<u32>,
}

/// The time of each stage over all chunks, one stage at a time on one stream.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StageTimes {
    /// All host-to-device copies, ms.
    pub h2d_ms: f64,
    /// All kernels, ms.
    pub kernel_ms: f64,
    /// All device-to-host copies, ms.
    pub d2h_ms: f64,
}

/// The device side of the overlap experiment.
pub struct Overlap {
    main: Stream,
    workers: Vec<Stream>,
    chunks: Vec<Chunk>,
    start: Event,
    end: Event,
    done: Vec<Event>,
    salt: u32,
}

impl Overlap {
    /// Splits `input` into `chunks` nearly equal chunks in pinned memory, with device buffers
    /// for each, and creates `max_streams` non-blocking worker streams plus the main stream
    /// that forks and joins them.
    pub fn new(input: &[u32], chunks: usize, max_streams: usize, salt: u32) -> Result<Overlap> {
        let non_blocking = StreamOptions { non_blocking: true, priority: None };
        let per = input.len().div_ceil(chunks);
        let chunks = input
            .chunks(per)
            .map(|part| {
                Ok(Chunk {
                    pin_in: PinnedBuffer::from_slice(part)?,
                    pin_out: PinnedBuffer::zeroed(part.len())?,
                    dev_in: DeviceBuffer::zeroed(part.len())?,
                    dev_out: DeviceBuffer::zeroed(part.len())?,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Overlap {
            main: Stream::with_options(non_blocking)?,
            workers: (0..max_streams).map(|_| Stream::with_options(non_blocking)).collect::<Result<_>>()?,
            chunks,
            start: Event::new()?,
            end: Event::new()?,
            done: (0..max_streams).map(|_| Event::new()).collect::<Result<_>>()?,
            salt,
        })
    }

    /// Number of chunks.
    pub fn chunk_count(&self) -> usize {
        self.chunks.len()
    }

    /// Clears every output (device and pinned) so a step that does not run shows.
    fn clear_outputs(&mut self) -> Result<()> {
        for chunk in &mut self.chunks {
            chunk.pin_out.as_mut_slice()?.fill(0);
            chunk.dev_out.memset_async(0, &self.main)?;
        }
        Ok(())
    }

    /// The whole pipeline on `streams` worker streams: the main stream records `start`, every
    /// worker waits for it (cross-stream wait), takes chunks `c` with `c % streams == k`, and
    /// records its `done` event; the main stream waits for all of them and records `end`.
    /// Returns the time from `start` to `end` in ms. `streams == 1` is the serialized run.
    pub fn run(&mut self, streams: usize, rounds: u32) -> Result<f64> {
        let streams = streams.clamp(1, self.workers.len());
        self.clear_outputs()?;
        self.start.record(&self.main)?;
        for worker in &self.workers[..streams] {
            worker.wait_event(&self.start)?;
        }
        for (c, chunk) in self.chunks.iter_mut().enumerate() {
            let stream = &self.workers[c % streams];
            let n = chunk.dev_in.len() as u32;
            chunk.dev_in.copy_from_pinned_async(&chunk.pin_in, stream)?;
            launch(stream, chunk.dev_in.ptr(), chunk.dev_out.ptr(), n, rounds, self.salt)?;
            chunk.dev_out.copy_to_pinned_async(&mut chunk.pin_out, stream)?;
        }
        for (worker, done) in self.workers[..streams].iter().zip(&self.done) {
            done.record(worker)?;
            self.main.wait_event(done)?;
        }
        self.end.record(&self.main)?;
        self.end.synchronize()?;
        Ok(f64::from(Event::elapsed_ms(&self.start, &self.end)?))
    }

    /// Times each stage over all chunks on its own (one stream, events around each stage).
    pub fn stage_times(&mut self, rounds: u32) -> Result<StageTimes> {
        self.clear_outputs()?;
        let stream = &self.workers[0];
        self.main.synchronize()?;
        let (start, end) = (&self.start, &self.end);
        let elapsed = || -> Result<f64> {
            end.synchronize()?;
            Ok(f64::from(Event::elapsed_ms(start, end)?))
        };
        start.record(stream)?;
        for chunk in &mut self.chunks {
            chunk.dev_in.copy_from_pinned_async(&chunk.pin_in, stream)?;
        }
        end.record(stream)?;
        let h2d_ms = elapsed()?;
        start.record(stream)?;
        for chunk in &self.chunks {
            let n = chunk.dev_in.len() as u32;
            launch(stream, chunk.dev_in.ptr(), chunk.dev_out.ptr(), n, rounds, self.salt)?;
        }
        end.record(stream)?;
        let kernel_ms = elapsed()?;
        start.record(stream)?;
        for chunk in &mut self.chunks {
            chunk.dev_out.copy_to_pinned_async(&mut chunk.pin_out, stream)?;
        }
        end.record(stream)?;
        let d2h_ms = elapsed()?;
        Ok(StageTimes { h2d_ms, kernel_ms, d2h_ms })
    }

    /// The first chunk whose pinned output differs from `table` applied to its input, as a
    /// message. Waits for the copies into the outputs.
    pub fn check(&self, table: &Table) -> Result<Option<String>> {
        for (c, chunk) in self.chunks.iter().enumerate() {
            let (input, output) = (chunk.pin_in.as_slice()?, chunk.pin_out.as_slice()?);
            if let Some((i, got, want)) = table.first_mismatch(&input, &output) {
                return Ok(Some(format!("chunk {c}, element {i}: {got:#x}, want {want:#x}")));
            }
        }
        Ok(None)
    }
}

/// Rounds that make the kernels take about as long as the copies in: scales `probe_rounds` by
/// the ratio of the measured times (used twice: the kernel's time is not quite proportional
/// to its rounds, as it also reads and writes memory).
pub fn rounds_to_match(probe_rounds: u32, kernel_ms: f64, target_ms: f64) -> u32 {
    if !(kernel_ms > 0.0 && target_ms > 0.0) {
        return probe_rounds;
    }
    (f64::from(probe_rounds) * target_ms / kernel_ms).round().clamp(1.0, f64::from(crate::MAX_ROUNDS)) as u32
}

/// The most the overlap can reach: all three stages running at once for the whole run, so
/// the longest one alone decides.
pub fn overlap_bound(stages: &StageTimes) -> f64 {
    let sum = stages.h2d_ms + stages.kernel_ms + stages.d2h_ms;
    sum / stages.h2d_ms.max(stages.kernel_ms).max(stages.d2h_ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calibration_scales_and_clamps() {
        assert_eq!(rounds_to_match(64, 0.5, 2.0), 256);
        assert_eq!(rounds_to_match(64, 0.0, 2.0), 64);
        assert_eq!(rounds_to_match(64, 1.0, 1e9), crate::MAX_ROUNDS);
        assert_eq!(rounds_to_match(64, 1e9, 1.0), 1);
    }

    #[test]
    fn balanced_stages_bound_the_overlap_at_three() {
        let even = StageTimes { h2d_ms: 2.0, kernel_ms: 2.0, d2h_ms: 2.0 };
        assert!((overlap_bound(&even) - 3.0).abs() < 1e-12);
        let skewed = StageTimes { h2d_ms: 1.0, kernel_ms: 4.0, d2h_ms: 1.0 };
        assert!((overlap_bound(&skewed) - 1.5).abs() < 1e-12);
    }
}
