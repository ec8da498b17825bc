//! The chapter programs, in the chapter's order. Each entry runs one example crate's
//! `run(&Options)` in-process and turns its report into a table row.
//!
//! Every example crate implements [`ChapterProgram`] on its `Program`: its options at chapter
//! scale (`Default`) and quick, `run`, and `headline` (the figure the table shows).

use chapter_common::{ChapterProgram, ExampleError, Report, Verdict};

use crate::table::{Check, Row};

/// One chapter program.
pub struct Program {
    /// The example crate's name.
    pub name: &'static str,
    /// What the chapter's own program measured on an H100.
    pub claim: &'static str,
    /// Runs it (quick: small sizes) with its claim and returns its row (see [`Program::row`]).
    pub run: fn(bool, &'static str) -> Row,
}

impl Program {
    /// Runs it (quick: small sizes) and returns its row.
    pub fn row(&self, quick: bool) -> Row {
        (self.run)(quick, self.claim)
    }
}

/// The row for one finished run.
fn row(
    program: &'static str,
    claim: &'static str,
    outcome: Result<Report, ExampleError>,
    headline: fn(&Report) -> String,
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

/// Runs `P` (quick: its small sizes) and returns its row.
fn run_program<P: ChapterProgram>(quick: bool, claim: &'static str) -> Row {
    let options = if quick { P::quick_options() } else { P::Options::default() };
    row(P::NAME, claim, P::run(&options), P::headline)
}

/// The entry for the chapter program `P`, with what the chapter claims for it.
fn program<P: ChapterProgram>(claim: &'static str) -> Program {
    Program { name: P::NAME, claim, run: run_program::<P> }
}

/// Every ported program, in the chapter's order.
pub fn all() -> Vec<Program> {
    vec![
        program::<atomic_work_queue::Program>("dynamic 1.81-1.98x over static"),
        program::<cuda_graphs::Program>("graph replay 1.35-1.40x over stream launches"),
        program::<cuda_graphs_pipeline::Program>("graph 3.03x over stream (0.0080 vs 0.0242 ms/iter)"),
        program::<cuda_graphs_conditional::Program>("branch and loop on the device, no host round trip"),
        program::<graph_conditional_runtime::Program>(
            "device-side branch beats sync + read flag + launch on the host",
        ),
        program::<dynamic_parallelism::Program>(
            "children launched on the device: 3 host launches to 1, 25% faster",
        ),
        program::<device_graph_launch::Program>(
            "device launch ~2x lower latency than host, flat in graph width",
        ),
        program::<moe_router::Program>(
            "experts dispatched on the device: no host round trip per routing step",
        ),
        program::<persistent_scheduler::Program>("persistent queue kernel up to ~3x over a host-driven loop"),
        program::<streams_events::Program>("3+ streams cut copy+compute time 40-60% (1.7-2.5x)"),
        program::<graph_memory::Program>(
            "allocate outside the graph: fixed addresses, memory reused across replays",
        ),
        program::<kernel_launches::Program>("~3 µs gap per stream launch, none in a graph"),
        program::<kernel_fusion::Program>("fusion cuts global-memory round trips of a memory-bound chain"),
        program::<graph_bandwidth::Program>("same GB/s for big copies; graphs only cut launch cost"),
        // (one line per ported program; keep the chapter's order)
    ]
}
