//! A data-parallel solve on every GPU of the host, one graph launch per GPU for the whole
//! loop: least squares (min |X w - y|^2) by gradient steps, the rows of X split across the
//! GPUs. Each pass computes every GPU's share of the gradient, sums the shares with an NCCL
//! all-reduce, takes the step on every GPU's copy of w, and tests convergence; a WHILE node
//! repeats the pass until the gradient is small. The same passes driven from the host (a copy
//! of the flag back each pass) time what the graph saves, and the CPU solves the same problem
//! to check the answer.
//!
//! ```no_run
//! use multi_gpu_solve::{problem, Solver};
//! let config = problem::Config::quick();
//! let comms = cuda_graph_nccl::Communicator::init_all()?;
//! let shards: Vec<_> = (0..comms.len()).map(|i| problem::shard(&config, i)).collect();
//! let mut solver = Solver::new(comms, config, &shards)?;
//! solver.run_from_host()?; // also connects NCCL's ranks before the capture
//! let execs = solver.build_graphs()?;
//! let took = solver.run_graphs(&execs)?;
//! println!("{} passes in {took:?}", solver.outcomes()?[0].passes);
//! # Ok::<(), cuda_graph::CudaError>(())
//! ```

pub mod gpu;
pub mod problem;
mod run;

pub use gpu::Solver;

/// Sets what NCCL must read at its start, unless the environment says otherwise: NVLink
/// multicast off (`NCCL_NVLS_ENABLE=0`, see cuda-graph-nccl's docs), and no event wait node in
/// captured collectives (`NCCL_GRAPH_MIXING_SUPPORT=0`), which CUDA refuses inside the WHILE
/// node's body; this program never has eager and captured collectives outstanding at once,
/// which is what that support is for. Call it first, before any thread or NCCL call.
pub fn nccl_environment() {
    for (name, value) in [("NCCL_NVLS_ENABLE", "0"), ("NCCL_GRAPH_MIXING_SUPPORT", "0")] {
        if std::env::var_os(name).is_none() {
            std::env::set_var(name, value);
        }
    }
}
pub use run::{run, Report, Way};
