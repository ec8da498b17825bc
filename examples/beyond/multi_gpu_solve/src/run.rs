//! One run of the program: solve both ways, check against the CPU, time per pass.

use std::time::Duration;

use cuda_graph::CudaError;
use cuda_graph_nccl::Communicator;

use crate::problem::{self, max_difference, Config, Outcome};
use crate::Solver;

/// How one way of running the solve did.
#[derive(Debug, Clone)]
pub struct Way {
    /// What rank 0 ended with in the last repeat.
    pub outcome: Outcome,
    /// In every repeat, every rank ended with the same w and pass count.
    pub ranks_alike: bool,
    /// Largest difference from the CPU's w, over the repeats.
    pub from_cpu: f64,
    /// Largest difference from the exact solution, over the repeats.
    pub from_exact: f64,
    /// The repeats (from 0) whose outcome failed a check; empty when all passed.
    pub failed_repeats: Vec<usize>,
    /// Median over the repeats of each repeat's time per pass, in microseconds.
    pub us_per_pass: f64,
    /// All checks passed in every repeat: ranks alike, w within 1e-6 of the CPU's and of the
    /// exact solution, the pass count within 2 of the CPU's (sums in another order may cross
    /// the tolerance a pass sooner or later) and below the cap.
    pub ok: bool,
}

/// A run: both ways, and the CPU's pass count.
#[derive(Debug, Clone)]
pub struct Report {
    /// GPUs used.
    pub ranks: usize,
    /// Passes the CPU solve took.
    pub cpu_passes: u32,
    /// Every pass driven from the host.
    pub host: Way,
    /// The whole loop as one graph launch per GPU.
    pub graph: Way,
}

impl Report {
    /// Both ways passed their checks.
    pub fn passed(&self) -> bool {
        self.host.ok && self.graph.ok
    }

    /// The host-driven time per pass over the graph's.
    pub fn speedup(&self) -> f64 {
        self.host.us_per_pass / self.graph.us_per_pass
    }
}

/// Solves on every GPU of the host, `repeats` times each way (host-driven first: its
/// collectives also connect NCCL's ranks, which a capture must not do), and on the CPU.
pub fn run(config: &Config, repeats: usize) -> Result<Report, CudaError> {
    let comms = Communicator::init_all()?;
    let ranks = comms.len();
    let shards: Vec<_> = (0..ranks).map(|i| problem::shard(config, i)).collect();
    let cpu = problem::solve_on_cpu(config, &shards);
    let mut solver = Solver::new(comms, *config, &shards)?;
    let mut host_times = Vec::new();
    let mut host = Vec::new();
    for _ in 0..repeats.max(1) {
        host_times.push(solver.run_from_host()?);
        host.push(solver.outcomes()?);
    }
    let execs = solver.build_graphs()?;
    solver.run_graphs(&execs)?; // the first launch uploads the graphs
    let mut graph_times = Vec::new();
    let mut graph = Vec::new();
    for _ in 0..repeats.max(1) {
        graph_times.push(solver.run_graphs(&execs)?);
        graph.push(solver.outcomes()?);
    }
    Ok(Report {
        ranks,
        cpu_passes: cpu.passes,
        host: way(&host, &host_times, &cpu, config),
        graph: way(&graph, &graph_times, &cpu, config),
    })
}

/// One way's figures and checks from every repeat's outcomes (one `Vec` per repeat, one
/// outcome per rank) and times.
fn way(repeats: &[Vec<Outcome>], times: &[Duration], cpu: &Outcome, config: &Config) -> Way {
    let exact = problem::solution(config.features);
    let (mut ranks_alike, mut from_cpu, mut from_exact, mut failed_repeats) =
        (true, 0.0f64, 0.0f64, Vec::new());
    for (index, outcomes) in repeats.iter().enumerate() {
        let first = &outcomes[0];
        let alike = outcomes.iter().all(|o| o == first);
        let to_cpu = max_difference(&first.w, &cpu.w);
        let to_exact = max_difference(&first.w, &exact);
        let passes_close = first.passes.abs_diff(cpu.passes) <= 2 && first.passes < config.max_passes;
        if !(alike && to_cpu <= 1e-6 && to_exact <= 1e-6 && passes_close) {
            failed_repeats.push(index);
        }
        ranks_alike &= alike;
        from_cpu = from_cpu.max(to_cpu);
        from_exact = from_exact.max(to_exact);
    }
    let outcome = repeats.last().map(|o| o[0].clone()).expect("at least one repeat");
    // Each repeat's time over its own pass count: repeats may differ by a pass or two.
    let mut per_pass: Vec<f64> = times
        .iter()
        .zip(repeats)
        .map(|(time, outcomes)| time.as_secs_f64() * 1e6 / f64::from(outcomes[0].passes.max(1)))
        .collect();
    per_pass.sort_by(f64::total_cmp);
    let us_per_pass = per_pass[per_pass.len() / 2];
    let ok = failed_repeats.is_empty();
    Way { outcome, ranks_alike, from_cpu, from_exact, failed_repeats, us_per_pass, ok }
}
