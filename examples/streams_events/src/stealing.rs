//! Work stealing between streams: chunks of uneven cost spread over a few streams. A static
//! split gives each stream a fixed contiguous share up front; the dynamic dispatcher keeps a
//! shared queue on the host and hands the next chunk to whichever stream's last chunk has
//! completed (its event), so a stream stuck with costly chunks takes fewer of them.

use std::collections::VecDeque;

use chapter_common::Rng;
use cuda_graph::{DeviceBuffer, Event, EventOptions, Result, Stream, StreamOptions};

use crate::work::{launch, Table};

/// How chunks are handed to streams.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    /// Stream `k` of `S` takes chunks `[k*C/S, (k+1)*C/S)`, all queued before the run.
    StaticSplit,
    /// A host loop gives the next chunk to the first stream with fewer than `depth` chunks in
    /// flight (their completion is polled with `cudaEventQuery`).
    Dynamic {
        /// Chunks a stream may have queued at once.
        depth: usize,
    },
}

impl Policy {
    /// A short name, used in figure names.
    pub fn name(self) -> &'static str {
        match self {
            Policy::StaticSplit => "static_split",
            Policy::Dynamic { .. } => "dynamic_dispatch",
        }
    }
}

/// The rounds of each chunk: light, except the chunks of a few hot spans, which cost
/// `heavy_factor` times more.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Costs {
    /// Rounds of `se_work` per chunk.
    pub rounds: Vec<u32>,
    /// Spans of `span` chunks the chunks form.
    pub spans: usize,
    /// How many of them are hot.
    pub hot_spans: usize,
}

impl Costs {
    /// `chunks` chunks in spans of `span`; `max(1, spans / hot_one_in)` spans, picked with the
    /// seed, are hot (as costly data tends to sit together).
    pub fn build(
        rng: &mut Rng, chunks: usize, span: usize, hot_one_in: usize, light: u32, heavy_factor: u32,
    ) -> Costs {
        let span = span.max(1);
        let spans = chunks.div_ceil(span);
        let hot_spans = (spans / hot_one_in.max(1)).clamp(1, spans.max(1));
        let hot = rng.flags(spans, hot_spans);
        let rounds = (0..chunks).map(|c| if hot[c / span] { light * heavy_factor } else { light }).collect();
        Costs { rounds, spans, hot_spans }
    }

    /// The distinct round counts.
    pub fn distinct(&self) -> Vec<u32> {
        let mut distinct = self.rounds.clone();
        distinct.sort_unstable();
        distinct.dedup();
        distinct
    }

    /// The stream each chunk goes to under the static split over `streams` streams.
    pub fn static_owner(chunks: usize, streams: usize, chunk: usize) -> usize {
        (chunk * streams) / chunks.max(1)
    }

    /// The costliest stream's share over the mean share under the static split (1 is even).
    pub fn static_imbalance(&self, streams: usize) -> f64 {
        let mut loads = vec![0u64; streams.max(1)];
        for (c, &r) in self.rounds.iter().enumerate() {
            loads[Self::static_owner(self.rounds.len(), streams.max(1), c)] += u64::from(r);
        }
        let max = loads.iter().copied().max().unwrap_or(0) as f64;
        let mean = loads.iter().sum::<u64>() as f64 / loads.len() as f64;
        max / mean
    }
}

/// The device side of the work-stealing experiment.
pub struct Stealing {
    main: Stream,
    workers: Vec<Stream>,
    input: DeviceBuffer<u32>,
    output: DeviceBuffer<u32>,
    chunk_len: usize,
    costs: Costs,
    start: Event,
    end: Event,
    joined: Vec<Event>,
    chunk_done: Vec<Event>,
    salt: u32,
}

impl Stealing {
    /// Uploads `input` (`costs.rounds.len()` chunks of `chunk_len`) and creates `streams`
    /// worker streams and the main stream.
    pub fn new(input: &[u32], chunk_len: usize, costs: Costs, streams: usize, salt: u32) -> Result<Stealing> {
        let non_blocking = StreamOptions { non_blocking: true, priority: None };
        let marker = || Event::with_options(EventOptions { timing: false, blocking_sync: false });
        Ok(Stealing {
            main: Stream::with_options(non_blocking)?,
            workers: (0..streams).map(|_| Stream::with_options(non_blocking)).collect::<Result<_>>()?,
            input: DeviceBuffer::from_slice(input)?,
            output: DeviceBuffer::zeroed(input.len())?,
            chunk_len,
            start: Event::new()?,
            end: Event::new()?,
            joined: (0..streams).map(|_| marker()).collect::<Result<_>>()?,
            chunk_done: (0..costs.rounds.len()).map(|_| marker()).collect::<Result<_>>()?,
            costs,
            salt,
        })
    }

    fn launch_chunk(&self, stream: usize, chunk: usize) -> Result<()> {
        let offset = chunk * self.chunk_len;
        let n = self.chunk_len as u32;
        let (input, output) = (self.input.ptr().offset(offset)?, self.output.ptr().offset(offset)?);
        let worker = &self.workers[stream];
        launch(worker, input, output, n, self.costs.rounds[chunk], self.salt)?;
        self.chunk_done[chunk].record(worker)
    }

    /// Runs all chunks under `policy`; returns the time from the fork to the join (ms) and
    /// the stream each chunk ran on.
    pub fn run(&mut self, policy: Policy) -> Result<(f64, Vec<usize>)> {
        let (chunks, streams) = (self.costs.rounds.len(), self.workers.len());
        self.output.memset_async(0, &self.main)?;
        self.start.record(&self.main)?;
        for worker in &self.workers {
            worker.wait_event(&self.start)?;
        }
        let mut owner = vec![usize::MAX; chunks];
        match policy {
            Policy::StaticSplit => {
                // Queued round by round so that no stream starts much before the others.
                let mut queues: Vec<VecDeque<usize>> = vec![VecDeque::new(); streams];
                for c in 0..chunks {
                    queues[Costs::static_owner(chunks, streams, c)].push_back(c);
                }
                while queues.iter().any(|q| !q.is_empty()) {
                    for (k, queue) in queues.iter_mut().enumerate() {
                        if let Some(c) = queue.pop_front() {
                            self.launch_chunk(k, c)?;
                            owner[c] = k;
                        }
                    }
                }
            }
            Policy::Dynamic { depth } => {
                let mut in_flight: Vec<VecDeque<usize>> = vec![VecDeque::new(); streams];
                let mut next = 0;
                while next < chunks {
                    let mut issued = false;
                    for (k, flight) in in_flight.iter_mut().enumerate() {
                        while let Some(&c) = flight.front() {
                            if !self.chunk_done[c].is_complete()? {
                                break;
                            }
                            flight.pop_front();
                        }
                        if flight.len() < depth.max(1) && next < chunks {
                            self.launch_chunk(k, next)?;
                            flight.push_back(next);
                            owner[next] = k;
                            next += 1;
                            issued = true;
                        }
                    }
                    if !issued {
                        std::hint::spin_loop();
                    }
                }
            }
        }
        for (worker, joined) in self.workers.iter().zip(&self.joined) {
            joined.record(worker)?;
            self.main.wait_event(joined)?;
        }
        self.end.record(&self.main)?;
        self.end.synchronize()?;
        Ok((f64::from(Event::elapsed_ms(&self.start, &self.end)?), owner))
    }

    /// The first chunk whose output differs from the reference, as a message.
    pub fn check(&self, input: &[u32], tables: &[Table]) -> Result<Option<String>> {
        self.main.synchronize()?;
        let output = self.output.to_vec()?;
        for (c, (inp, out)) in input.chunks(self.chunk_len).zip(output.chunks(self.chunk_len)).enumerate() {
            let rounds = self.costs.rounds[c];
            let Some(table) = tables.iter().find(|t| t.rounds == rounds) else {
                return Ok(Some(format!("no reference table for {rounds} rounds")));
            };
            if let Some((i, got, want)) = table.first_mismatch(inp, out) {
                return Ok(Some(format!(
                    "chunk {c} ({rounds} rounds), element {i}: {got:#x}, want {want:#x}"
                )));
            }
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hot_spans_are_whole_and_seeded() {
        let costs = Costs::build(&mut Rng::new(4), 64, 4, 16, 100, 8);
        assert_eq!((costs.spans, costs.hot_spans), (16, 1));
        let heavy: Vec<usize> = (0..64).filter(|&c| costs.rounds[c] == 800).collect();
        assert_eq!(heavy.len(), 4);
        assert!(heavy.windows(2).all(|w| w[1] == w[0] + 1) && heavy[0].is_multiple_of(4));
        assert_eq!(costs.distinct(), [100, 800]);
        assert_eq!(costs, Costs::build(&mut Rng::new(4), 64, 4, 16, 100, 8));
    }

    #[test]
    fn the_static_split_is_contiguous_and_even_in_count() {
        let owners: Vec<usize> = (0..16).map(|c| Costs::static_owner(16, 4, c)).collect();
        assert_eq!(owners, [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3]);
    }

    #[test]
    fn one_hot_span_unbalances_the_static_split() {
        let costs = Costs::build(&mut Rng::new(9), 64, 4, 16, 100, 8);
        // One stream holds 4 heavy + 12 light = 44 units; the mean is (60 + 32) / 4 = 23.
        assert!((costs.static_imbalance(4) - 44.0 / 23.0).abs() < 1e-9);
        let uniform = Costs::build(&mut Rng::new(9), 64, 4, 16, 100, 1);
        assert!((uniform.static_imbalance(4) - 1.0).abs() < 1e-12);
    }
}
