//! One run of the program: solve both ways, check against the CPU, time per pass.

use std::time::Duration;

use cuda_graph::CudaError;
use cuda_graph_nccl::Communicator;

use crate::problem::{self, max_difference, Config, Outcome};
use crate::Solver;

/// How one way of running the solve did.
#[derive(Debug, Clone)]
pub struct Way {
    /// What rank 0 ended with.
    pub outcome: Outcome,
    /// Every rank ended with the same w and pass count.
    pub ranks_alike: bool,
    /// Largest difference from the CPU's w.
    pub from_cpu: f64,
    /// Largest difference from the exact solution.
    pub from_exact: f64,
    /// Median time per pass, in microseconds.
    pub us_per_pass: f64,
    /// All checks passed: ranks alike, w within 1e-6 of the CPU's and of the exact solution,
    /// the pass count within 2 of the CPU's (sums in another order may cross the tolerance a
    /// pass sooner or later) and below the cap.
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
        host = solver.outcomes()?;
    }
    let execs = solver.build_graphs()?;
    solver.run_graphs(&execs)?; // the first launch uploads the graphs
    let mut graph_times = Vec::new();
    let mut graph = Vec::new();
    for _ in 0..repeats.max(1) {
        graph_times.push(solver.run_graphs(&execs)?);
        graph = solver.outcomes()?;
    }
    Ok(Report {
        ranks,
        cpu_passes: cpu.passes,
        host: way(&host, &host_times, &cpu, config),
        graph: way(&graph, &graph_times, &cpu, config),
    })
}

fn way(outcomes: &[Outcome], times: &[Duration], cpu: &Outcome, config: &Config) -> Way {
    let outcome = outcomes[0].clone();
    let ranks_alike = outcomes.iter().all(|o| *o == outcome);
    let from_cpu = max_difference(&outcome.w, &cpu.w);
    let from_exact = max_difference(&outcome.w, &problem::solution(config.features));
    let passes_close = outcome.passes.abs_diff(cpu.passes) <= 2 && outcome.passes < config.max_passes;
    let mut sorted = times.to_vec();
    sorted.sort();
    let us_per_pass = sorted[sorted.len() / 2].as_secs_f64() * 1e6 / f64::from(outcome.passes.max(1));
    let ok = ranks_alike && from_cpu <= 1e-6 && from_exact <= 1e-6 && passes_close;
    Way { outcome, ranks_alike, from_cpu, from_exact, us_per_pass, ok }
}
