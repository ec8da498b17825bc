//! Runs every batch size every way (and the profile's graphs), interleaved run by run, checks
//! each generation against the CPU reference, and keeps the medians.

use chapter_common::Samples;
use serde_json::{json, Value};

use crate::device::DeviceModel;
use crate::profile::Probe;
use crate::reference::Generation;
use crate::results::Row;
use crate::ways::{Plan, Runner, Timed, Way};
use crate::PROB_TOLERANCE;

/// What one way (or probe) did over every batch and run: how many generations, and the first
/// that differed from the reference.
#[derive(Debug, Clone, Default)]
pub struct Record {
    /// Generations run (timed or not).
    pub generations: usize,
    /// The first difference from the reference, if any.
    pub mismatch: Option<String>,
}

impl Record {
    /// Counts `timed` and keeps its difference from `want` if it is the first: the step count,
    /// then (when `tokens`) every token and probability.
    fn check(&mut self, timed: &Timed, want: &Generation, tokens: bool, place: impl FnOnce() -> String) {
        self.generations += 1;
        if self.mismatch.is_some() {
            return;
        }
        let difference = if timed.steps != want.steps() {
            Some(format!("{} steps, want {}", timed.steps, want.steps()))
        } else if tokens {
            timed.generation.difference(want, PROB_TOLERANCE)
        } else {
            None
        };
        self.mismatch = difference.map(|d| format!("{}: {d}", place()));
    }
}

/// Everything measured.
#[derive(Debug, Default)]
pub struct Measured {
    /// One row per batch size and way.
    pub rows: Vec<Row>,
    /// The rows as JSON, with every run.
    pub row_json: Vec<Value>,
    /// Per batch size: the profile's medians and what they say about each way.
    pub profile: Vec<Value>,
    /// Per way of the plan, in its order.
    pub ways: Vec<(Way, Record)>,
    /// Per probe of the plan, in its order.
    pub probes: Vec<(Probe, Record)>,
}

/// Runs `runs` timed runs (after one warm-up) of every way and probe of `plan` for each of
/// `batches` (batch `b`: the first `b` of `starts`), checking each against `reference`.
pub fn measure(
    model: &DeviceModel, plan: &Plan, starts: &[u32], reference: &Generation, batches: &[u32], max_len: u32,
    runs: usize,
) -> cuda_graph::Result<Measured> {
    let mut out = Measured {
        ways: plan.ways.iter().map(|&w| (w, Record::default())).collect(),
        probes: plan.probes.iter().map(|&p| (p, Record::default())).collect(),
        ..Measured::default()
    };
    for &batch in batches {
        let want = Generation {
            tokens: reference.tokens[..batch as usize].to_vec(),
            probs: reference.probs[..batch as usize].to_vec(),
        };
        let mut runner = Runner::new(model, plan, &starts[..batch as usize], max_len, want.steps())?;
        let mut us = vec![Samples::default(); plan.ways.len()];
        let mut tps = vec![Samples::default(); plan.ways.len()];
        let mut probe_us = vec![Samples::default(); plan.probes.len()];
        let per_step = |timed: &Timed| timed.ms * 1e3 / f64::from(timed.steps.max(1));
        // Runs interleave the ways, so that a drift of the clocks touches them alike.
        for run in 0..=runs {
            let place = || format!("batch {batch}, run {run}");
            for (index, (way, record)) in out.ways.iter_mut().enumerate() {
                let timed = runner.run(model, *way)?;
                record.check(&timed, &want, true, place);
                if run > 0 {
                    us[index].push(per_step(&timed));
                    tps[index].push(want.total_tokens() as f64 / (timed.ms * 1e-3));
                }
            }
            for (index, (probe, record)) in out.probes.iter_mut().enumerate() {
                let timed = runner.probe(*probe)?;
                record.check(&timed, &want, probe.generates(), place);
                if run > 0 {
                    probe_us[index].push(per_step(&timed));
                }
            }
        }
        for (index, &way) in plan.ways.iter().enumerate() {
            let row = Row {
                batch,
                way: way.key().to_string(),
                label: way.label().to_string(),
                steps: want.steps(),
                tokens: want.total_tokens(),
                us_per_step: us[index].median(),
                tokens_per_s: tps[index].median(),
                runs,
                us_runs: us[index].0.clone(),
            };
            out.row_json.push(row.to_json(&us[index], &tps[index]));
            out.rows.push(row);
        }
        // What each way adds to the steps' own GPU time: its time minus its step chain's.
        let median_of =
            |probe: Probe| plan.probes.iter().position(|&p| p == probe).map(|i| probe_us[i].median());
        let added: serde_json::Map<String, Value> = plan
            .ways
            .iter()
            .zip(&us)
            .filter_map(|(&way, us)| {
                Some((way.key().to_string(), json!(us.median() - median_of(way.chain())?)))
            })
            .collect();
        let mut entry = json!({"batch": batch, "steps": want.steps(), "added_per_step_us": added});
        for (probe, samples) in plan.probes.iter().zip(&probe_us) {
            entry[probe.key()] = samples.to_json();
        }
        out.profile.push(entry);
    }
    Ok(out)
}
