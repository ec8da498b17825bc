//! Where a step's time goes, measured beside the ways with the same events:
//! - **kernels alone**: each kernel of the step `repeats` times back to back in one graph
//!   (captured from the step's own launches), its time per kernel, at the middle of the
//!   generation (N/2 steps after the prompt: attention and its combine grow with the position,
//!   so that is the generation's mean) and, for their sum only, at the first decode position;
//!   their sum over the step is the kernels' own GPU time (each node's gap in a graph included,
//!   well under a microsecond). Launched from the host one by one instead, the
//!   kernels would be timed at the host's pace: the step's code runs for all 82 kernels to
//!   launch one, about 11 µs a launch on the H200, more than most of the kernels take.
//! - **empty WHILE**: a WHILE loop of as many iterations as the generation's steps, whose body
//!   is do-nothing kernels of the step's geometry: loop control and launches alone.
//! - **step chain**: `min(N, 64)` steps unrolled into one graph (plain, and with programmatic
//!   edges inside each step), launched ⌊N / 64⌋ times in a row from the prompt on: the same
//!   positions as the ways (all N when 64 divides N), with no loop control.
//!
//! Gaps per step = a way's time per step − the kernels' own time.

use chapter_common::Samples;
use cuda_graph::graph::{CaptureMode, GraphExec, HostLaunch};
use cuda_graph::{DeviceBuffer, Result};
use serde_json::{json, Value};

use crate::device::{Chain, DeviceModel, OnlyOp, Op, Pick};
use crate::graphs;
use crate::ways::Runner;

/// Steps of the unrolled chain at most.
pub const CHAIN_STEPS: usize = 64;

/// The profile's medians.
#[derive(Debug, Clone, Default)]
pub struct Profile {
    /// Per kernel kind (qkv, attn, ...): µs per step (summed over the layers), at the middle
    /// of the generation.
    pub kernel_us: Vec<(&'static str, f64)>,
    /// The kernels' own GPU time per step, µs, at the middle of the generation.
    pub kernels_us: f64,
    /// The same at the first decode position.
    pub kernels_first_us: f64,
    /// The empty WHILE loop, µs per iteration.
    pub empty_while_us: f64,
    /// The unrolled steps, plain edges, µs per step.
    pub chain_us: f64,
    /// The unrolled steps, programmatic edges, µs per step (None below sm_90).
    pub chain_pdl_us: Option<f64>,
    /// Steps unrolled.
    pub chain_steps: usize,
    /// Launches of the unrolled steps in a row (their steps are the ones timed).
    pub chain_launches: usize,
    /// Iterations the empty loop counted (its check: the generation's steps).
    pub empty_while_counted: u32,
}

impl Profile {
    /// As JSON.
    pub fn to_json(&self) -> Value {
        let kernels: serde_json::Map<String, Value> =
            self.kernel_us.iter().map(|(name, us)| (name.to_string(), json!(us))).collect();
        json!({
            "kernel_us_per_step": kernels,
            "kernels_us_per_step": self.kernels_us,
            "kernels_first_position_us_per_step": self.kernels_first_us,
            "empty_while_us_per_iteration": self.empty_while_us,
            "chain_plain_us_per_step": self.chain_us,
            "chain_pdl_us_per_step": self.chain_pdl_us,
            "chain_steps": self.chain_steps,
            "chain_launches": self.chain_launches,
        })
    }
}

/// Measures the profile `runs` times (medians) on `runner`'s decoder for a generation of
/// `tokens` steps.
pub fn measure(
    model: &DeviceModel, runner: &mut Runner, tokens: usize, programmatic: bool, runs: usize, repeats: usize,
) -> Result<Profile> {
    let ops = runner.decoder().ops();
    let mut per_op = vec![Samples::default(); ops.len()];
    let mut first = Samples::default();
    let (mut empty, mut chain, mut chain_pdl) = (Samples::default(), Samples::default(), Samples::default());
    let mut counter = DeviceBuffer::<u32>::zeroed(1)?;
    let empty_exec = graphs::empty_while(runner.decoder(), &counter, tokens as u32)?;
    let chain_steps = tokens.min(CHAIN_STEPS);
    let chain_launches = tokens / chain_steps;
    let chain_exec = graphs::step_chain(model, runner.decoder(), chain_steps as u32, Chain::Plain)?;
    let chain_pdl_exec = if programmatic {
        Some(graphs::step_chain(model, runner.decoder(), chain_steps as u32, Chain::Programmatic)?)
    } else {
        None
    };
    let alone: Vec<GraphExec<HostLaunch>> =
        ops.iter().map(|&op| kernel_alone(model, runner, op, repeats)).collect::<Result<_>>()?;
    let per_kernel = |runner: &mut Runner, exec: &GraphExec<HostLaunch>| -> Result<f64> {
        Ok(runner.between_events(|r| exec.launch(r.stream()))? * 1e3 / repeats as f64)
    };
    let mut counted = 0;
    for _ in 0..runs.max(1) {
        runner.time_after_prefill(model, |_| Ok(()))?;
        let mut sum = 0.0;
        for exec in &alone {
            sum += per_kernel(runner, exec)?;
        }
        first.push(sum);
        runner.time_after_prefill(model, |r| r.advance(tokens / 2))?;
        for (index, exec) in alone.iter().enumerate() {
            per_op[index].push(per_kernel(runner, exec)?);
        }
        counter.memset_async(0, runner.stream())?;
        let ms = runner.between_events(|r| empty_exec.launch(r.stream()))?;
        empty.push(ms * 1e3 / tokens as f64);
        counted = counter.to_vec()?[0];
        let timed_steps = (chain_launches * chain_steps) as f64;
        let ms = runner.time_after_prefill(model, |r| launch_times(&chain_exec, r, chain_launches))?;
        chain.push(ms * 1e3 / timed_steps);
        if let Some(exec) = &chain_pdl_exec {
            let ms = runner.time_after_prefill(model, |r| launch_times(exec, r, chain_launches))?;
            chain_pdl.push(ms * 1e3 / timed_steps);
        }
    }
    let mut kernel_us: Vec<(&'static str, f64)> = Vec::new();
    for (op, samples) in ops.iter().zip(&per_op) {
        match kernel_us.iter_mut().find(|(name, _)| *name == op.name()) {
            Some((_, us)) => *us += samples.median(),
            None => kernel_us.push((op.name(), samples.median())),
        }
    }
    let kernels_us = kernel_us.iter().map(|(_, us)| us).sum();
    Ok(Profile {
        kernel_us,
        kernels_us,
        kernels_first_us: first.median(),
        empty_while_us: empty.median(),
        chain_us: chain.median(),
        chain_pdl_us: chain_pdl_exec.as_ref().map(|_| chain_pdl.median()),
        chain_steps,
        chain_launches,
        empty_while_counted: counted,
    })
}

/// Launches `exec` `times` in a row on `runner`'s stream.
fn launch_times(exec: &GraphExec<HostLaunch>, runner: &mut Runner, times: usize) -> Result<()> {
    for _ in 0..times {
        exec.launch(runner.stream())?;
    }
    Ok(())
}

/// One graph of `op`'s kernel `repeats` times in a row, captured from the step's own launches
/// on `runner`'s stream (so with the step's arguments).
fn kernel_alone(
    model: &DeviceModel, runner: &Runner, op: Op, repeats: usize,
) -> Result<GraphExec<HostLaunch>> {
    let capture = runner.stream().begin_capture(CaptureMode::ThreadLocal)?;
    for _ in 0..repeats {
        runner.decoder().step(model, Pick::Host, &mut OnlyOp(runner.stream(), op))?;
    }
    capture.end()?.instantiate(Default::default())
}

/// Op kinds in the order of a step (for tables).
pub fn kinds() -> [&'static str; 7] {
    [Op::Qkv(0), Op::Attn(0), Op::OProj(0), Op::GateUp(0), Op::Down(0), Op::LmHead, Op::Pick].map(Op::name)
}
