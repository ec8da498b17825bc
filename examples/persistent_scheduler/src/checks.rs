//! What a drain must leave, and each way's samples and first problems against it.

use chapter_common::Samples;

use crate::{counters, Outcome};

/// Per-run samples of one way and the first problem of each kind met.
#[derive(Default)]
pub(crate) struct Way {
    pub(crate) ms: Samples,
    pub(crate) once: Option<String>,
    pub(crate) output: Option<String>,
    pub(crate) launches: Option<String>,
    pub(crate) scheduler_runs: u32,
}

impl Way {
    pub(crate) fn record(&mut self, run: usize, outcome: Outcome, want: &Expected, scheduler: bool) {
        if run > 0 {
            self.ms.push(outcome.ms);
        }
        let n = want.output.len() / want.width;
        if self.once.is_none() {
            let wrong: Vec<(usize, u32)> =
                outcome.hits.iter().copied().enumerate().filter(|&(_, h)| h != 1).take(5).collect();
            self.once = if !wrong.is_empty() {
                Some(format!("run {run}: items not processed exactly once (item, times): {wrong:?}"))
            } else if outcome.processed as usize != n {
                Some(format!("run {run}: the queue counted {} items done, want {n}", outcome.processed))
            } else {
                None
            };
        }
        if self.output.is_none() {
            if let Some(i) = outcome.output.iter().zip(&want.output).position(|(a, b)| a != b) {
                self.output = Some(format!(
                    "run {run}: item {} element {}: {:#x}, want {:#x}",
                    i / want.width,
                    i % want.width,
                    outcome.output[i],
                    want.output[i]
                ));
            }
        }
        let c = &outcome.counters;
        self.scheduler_runs = c[counters::RUNS];
        if self.launches.is_none() {
            let taken: Vec<u32> = (0..want.per_kind.len()).map(|k| c[counters::SEQ + k]).collect();
            self.launches = if let Some(refused) = outcome.refused {
                Some(format!("run {run}: {refused}"))
            } else if scheduler && outcome.launched != n as u64 {
                Some(format!("run {run}: {} item graphs launched, want {n}", outcome.launched))
            } else if taken != want.per_kind {
                Some(format!("run {run}: graph runs per kind {taken:?}, want {:?}", want.per_kind))
            } else if scheduler && c[counters::RUNS] != want.scheduler_runs {
                Some(format!("run {run}: {} scheduler runs, want {}", c[counters::RUNS], want.scheduler_runs))
            } else {
                None
            };
        }
    }
}

/// What a drain must leave.
pub(crate) struct Expected {
    pub(crate) output: Vec<u32>,
    pub(crate) width: usize,
    pub(crate) per_kind: Vec<u32>,
    pub(crate) scheduler_runs: u32,
}
