//! The chapter programs, in the chapter's order. Each entry runs one example crate's
//! `run(&Options)` in-process and turns its report into a table row.
//!
//! Every example crate offers the same four items, which [`program!`] relies on:
//! `Options` (with `Default` at chapter scale), `Options::quick()` (small sizes),
//! `run(&Options) -> Result<chapter_common::Report, cuda_graph::CudaError>`, and
//! `headline(&Report) -> String` (the figure the table shows).

use chapter_common::Verdict;

use crate::table::{Check, Row};

/// One chapter program.
pub struct Program {
    /// The example crate's name.
    pub name: &'static str,
    /// What the chapter's own program measured on an H100.
    pub claim: &'static str,
    /// Runs it (quick: small sizes) and returns its row.
    pub run: fn(bool) -> Row,
}

/// The row for one finished run.
fn row(
    program: &'static str,
    claim: &'static str,
    outcome: Result<chapter_common::Report, cuda_graph::CudaError>,
    headline: fn(&chapter_common::Report) -> String,
) -> Row {
    let (check, headline, failures) = match outcome {
        Ok(report) => match report.verdict() {
            Verdict::Pass => (Check::Pass, headline(&report), Vec::new()),
            Verdict::Fail(failed) => (Check::Fail, headline(&report), failed),
        },
        Err(err) => (Check::Fail, format!("error: {err}"), vec![err.to_string()]),
    };
    Row { program, check, headline, claim, failures }
}

/// `program!(crate_name, "the chapter's claim")`: the entry for one example crate.
macro_rules! program {
    ($krate:ident, $claim:expr) => {
        Program {
            name: stringify!($krate),
            claim: $claim,
            run: |quick| {
                let options = if quick { $krate::Options::quick() } else { Default::default() };
                row(stringify!($krate), $claim, $krate::run(&options), $krate::headline)
            },
        }
    };
}

/// Every ported program, in the chapter's order.
pub fn all() -> Vec<Program> {
    vec![
        program!(atomic_work_queue, "dynamic 1.81-1.98x over static"),
        program!(cuda_graphs, "graph replay 1.35-1.40x over stream launches"),
        program!(cuda_graphs_pipeline, "graph 3.03x over stream (0.0080 vs 0.0242 ms/iter)"),
        program!(cuda_graphs_conditional, "branch and loop on the device, no host round trip"),
        program!(graph_conditional_runtime, "device-side branch beats sync + read flag + launch on the host"),
        program!(dynamic_parallelism, "children launched on the device: 3 host launches to 1, 25% faster"),
        program!(device_graph_launch, "device launch ~2x lower latency than host, flat in graph width"),
        program!(moe_router, "experts dispatched on the device: no host round trip per routing step"),
        program!(persistent_scheduler, "persistent queue kernel up to ~3x over a host-driven loop"),
        program!(streams_events, "3+ streams cut copy+compute time 40-60% (1.7-2.5x)"),
        program!(graph_memory, "allocate outside the graph: fixed addresses, memory reused across replays"),
        program!(kernel_launches, "~3 µs gap per stream launch, none in a graph"),
        program!(kernel_fusion, "fusion cuts global-memory round trips of a memory-bound chain"),
        program!(graph_bandwidth, "same GB/s for big copies; graphs only cut launch cost"),
        // (one line per ported program; keep the chapter's order)
    ]
}
