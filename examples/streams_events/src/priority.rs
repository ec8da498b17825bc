//! Stream priorities: a small latency-critical kernel submitted while a flood of long
//! low-priority kernels keeps every SM busy. The block scheduler hands free SM slots to pending
//! blocks of higher-priority streams first, so the urgent kernel waits for one flood block to
//! finish rather than for the flood kernel's whole backlog of blocks.

use cuda_graph::{DeviceBuffer, Event, Result, Stream, StreamOptions};

use crate::work::{launch, spin_until, Table, THREADS_PER_BLOCK};

/// Where and against what the urgent kernel runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// No flood: the urgent kernel's latency on an idle GPU.
    Idle,
    /// Flood running; urgent stream at the flood's (lowest) priority.
    SamePriority,
    /// Flood running; urgent stream at the greatest priority.
    HighPriority,
}

impl Mode {
    /// All modes, in report order.
    pub const ALL: [Mode; 3] = [Mode::Idle, Mode::SamePriority, Mode::HighPriority];

    /// A short name, used in figure names (`urgent_<name>_us`).
    pub fn name(self) -> &'static str {
        match self {
            Mode::Idle => "idle",
            Mode::SamePriority => "same_priority",
            Mode::HighPriority => "high_priority",
        }
    }
}

/// What one trial measured.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Trial {
    /// From submitting the urgent kernel to its completion (events on the urgent stream), ms.
    pub urgent_ms: f64,
    /// Duration of the first flood kernel (events on the flood stream), ms; NaN when idle.
    pub flood_kernel_ms: f64,
}

/// The device side of the priority experiment.
pub struct Priorities {
    flood: Stream,
    urgent_same: Stream,
    urgent_high: Stream,
    flood_in: DeviceBuffer<u32>,
    flood_out: DeviceBuffer<u32>,
    urgent_in: DeviceBuffer<u32>,
    urgent_out: DeviceBuffer<u32>,
    flood_kernels: u32,
    /// (least, greatest) priority of the device.
    pub range: (i32, i32),
    events: [Event; 4],
    salt: u32,
}

impl Priorities {
    /// The three streams (flood and same-priority urgent at the least priority, the other
    /// urgent stream at the greatest), the flood's input (`flood_input`, shared by all flood
    /// kernels) and one output slice per flood kernel, and the urgent job's buffers.
    pub fn new(
        flood_input: &[u32], flood_kernels: u32, urgent_input: &[u32], salt: u32,
    ) -> Result<Priorities> {
        let range = Stream::priority_range()?;
        let (least, greatest) = range;
        let stream =
            |priority| Stream::with_options(StreamOptions { non_blocking: true, priority: Some(priority) });
        // Created one after another, so that they land on distinct hardware queues.
        let (flood, urgent_same, urgent_high) = (stream(least)?, stream(least)?, stream(greatest)?);
        let flood_len = flood_input.len() * flood_kernels as usize;
        Ok(Priorities {
            flood,
            urgent_same,
            urgent_high,
            flood_in: DeviceBuffer::from_slice(flood_input)?,
            flood_out: DeviceBuffer::zeroed(flood_len)?,
            urgent_in: DeviceBuffer::from_slice(urgent_input)?,
            urgent_out: DeviceBuffer::zeroed(urgent_input.len())?,
            flood_kernels,
            range,
            events: [Event::new()?, Event::new()?, Event::new()?, Event::new()?],
            salt,
        })
    }

    /// The priorities the three streams actually got: (flood, urgent same, urgent high).
    pub fn stream_priorities(&self) -> Result<(i32, i32, i32)> {
        Ok((self.flood.priority()?, self.urgent_same.priority()?, self.urgent_high.priority()?))
    }

    /// One trial: clears the outputs; unless `Idle`, queues the flood (`flood_kernels`
    /// kernels of `flood_rounds`) and waits on the host until its first kernel has finished,
    /// so the second is running with most of its blocks still pending; then submits the urgent
    /// kernel between two events on the urgent stream and waits for everything.
    pub fn trial(&mut self, mode: Mode, flood_rounds: u32, urgent_rounds: u32) -> Result<Trial> {
        let [flood_start, flood_first_done, urgent_start, urgent_end] = &self.events;
        let urgent = if mode == Mode::SamePriority { &self.urgent_same } else { &self.urgent_high };
        self.flood_out.memset_async(0, &self.flood)?;
        self.urgent_out.memset_async(0, urgent)?;
        self.flood.synchronize()?;
        urgent.synchronize()?;

        let mut flood_kernel_ms = f64::NAN;
        if mode != Mode::Idle {
            let n = self.flood_in.len() as u32;
            flood_start.record(&self.flood)?;
            for k in 0..self.flood_kernels as usize {
                let out = self.flood_out.ptr().offset(k * n as usize)?;
                launch(&self.flood, self.flood_in.ptr(), out, n, flood_rounds, self.salt)?;
                if k == 0 {
                    flood_first_done.record(&self.flood)?;
                }
            }
            spin_until(|| flood_first_done.is_complete())?;
            flood_kernel_ms = f64::from(Event::elapsed_ms(flood_start, flood_first_done)?);
        }
        let n = self.urgent_in.len() as u32;
        urgent_start.record(urgent)?;
        launch(urgent, self.urgent_in.ptr(), self.urgent_out.ptr(), n, urgent_rounds, self.salt)?;
        urgent_end.record(urgent)?;
        urgent_end.synchronize()?;
        let urgent_ms = f64::from(Event::elapsed_ms(urgent_start, urgent_end)?);
        self.flood.synchronize()?;
        Ok(Trial { urgent_ms, flood_kernel_ms })
    }

    /// Checks the last trial's outputs: the urgent job's always, the flood's unless `mode` is
    /// `Idle` (then they must still be cleared). Returns the first mismatch as a message.
    pub fn check(
        &self, mode: Mode, flood_input: &[u32], flood_table: &Table, urgent_input: &[u32],
        urgent_table: &Table,
    ) -> Result<Option<String>> {
        let urgent = self.urgent_out.to_vec()?;
        if let Some((i, got, want)) = urgent_table.first_mismatch(urgent_input, &urgent) {
            return Ok(Some(format!("{}: urgent element {i} is {got:#x}, want {want:#x}", mode.name())));
        }
        let flood = self.flood_out.to_vec()?;
        for (k, out) in flood.chunks(flood_input.len()).enumerate() {
            let bad = if mode == Mode::Idle {
                out.iter().position(|&v| v != 0).map(|i| (i, out[i], 0))
            } else {
                flood_table.first_mismatch(flood_input, out)
            };
            if let Some((i, got, want)) = bad {
                return Ok(Some(format!(
                    "{}: flood kernel {k}, element {i} is {got:#x}, want {want:#x}",
                    mode.name()
                )));
            }
        }
        Ok(None)
    }
}

/// Elements of one flood kernel: `waves` full waves of 256-thread blocks over `sms` SMs, at
/// 8 resident blocks (2048 threads) per SM.
pub fn flood_elements(sms: u32, waves: u32) -> u32 {
    sms.max(1) * 8 * waves * THREADS_PER_BLOCK
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flood_kernel_fills_every_sm_for_each_wave() {
        assert_eq!(flood_elements(132, 1), 132 * 2048);
        assert_eq!(flood_elements(0, 2), 2 * 2048);
    }

    #[test]
    fn mode_names_are_distinct() {
        let names: Vec<&str> = Mode::ALL.iter().map(|m| m.name()).collect();
        assert_eq!(names, ["idle", "same_priority", "high_priority"]);
    }
}
