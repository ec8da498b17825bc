//! The WHILE loop: damped Jacobi sweeps of a small tridiagonal system until the largest change
//! of any value drops to the tolerance, run as a WHILE node whose body kernels set the loop's
//! condition, and as two host-driven loops that learn the decision after every round of
//! sweeps: one reads a flag the kernel wrote into mapped host memory (no copy), one copies the
//! flag back. A round ([`Rounds`]) is one run of the WHILE body, or one host round trip; both
//! kinds of loop put the same number of sweeps in one.

use chapter_common::Rng;
use cuda_graph::graph::{Dependency, Graph, GraphExec, HostLaunch, KernelNode};
use cuda_graph::kernel::{KernelAttributes, LaunchAttributes, LaunchConfig};
use cuda_graph::{
    ConditionalHandle, DeviceBuffer, DevicePtr, Event, MappedBuffer, PinnedBuffer, Result, Stream,
};

// SAFETY: each kernel below reads and writes its pointers only below the counts it is given
// (see kernels/*.cu); the declarations are private to this crate, whose launches pass counts
// no larger than the buffers they point into.
cuda_graph::kernels! {
    /// A WHILE body's sweep; the last one calls `cudaGraphSetConditional(handle, 0)`, and those
    /// after it in the same body run do nothing.
    unsafe fn cgc_relax_while(
        handle: ConditionalHandle,
        x: DevicePtr<f32>,
        b: DevicePtr<f32>,
        n: u32,
        w: f32,
        tol: f32,
        max_steps: u32,
        state: DevicePtr<u32>,
    );
    /// A host-driven loop's sweep, then `*flag` = whether to go on (`state[2]` for the copy
    /// loop, a word of mapped host memory for the mapped-flag loop); those after the last one
    /// in the same round do nothing.
    unsafe fn cgc_relax_host(
        x: DevicePtr<f32>,
        b: DevicePtr<f32>,
        n: u32,
        w: f32,
        tol: f32,
        max_steps: u32,
        state: DevicePtr<u32>,
        flag: DevicePtr<u32>,
    );
}

/// The most unknowns one block sweeps (`CGC_MAX_N` in the kernels).
pub const MAX_UNKNOWNS: u32 = 1024;

/// How the loops group their sweeps: `sweeps` in a row in each run of the WHILE body and in
/// each host round trip, joined by programmatic dependent launch when `programmatic` (sm_90
/// and later). A WHILE iteration costs about 4 µs on the H100 however little its body does,
/// and a host round trip more: a round of several sweeps pays that once for all of them.
/// The sweeps after the one that stops the loop do nothing, so every grouping runs exactly
/// the sweeps of one sweep a round, with the same results.
///
/// ```
/// use cuda_graphs_conditional::relax::Rounds;
/// let one_by_one = Rounds { sweeps: 1, programmatic: false };
/// assert_eq!(one_by_one.to_string(), "1 sweep a round");
/// assert_eq!(Rounds { sweeps: 4, programmatic: true }.to_string(), "4 sweeps a round, programmatic");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rounds {
    /// Sweeps a round, at least 1.
    pub sweeps: u32,
    /// Whether consecutive sweeps are joined by programmatic edges (WHILE) or launched with
    /// programmatic stream serialization (host loops).
    pub programmatic: bool,
}

impl std::fmt::Display for Rounds {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let plural = if self.sweeps == 1 { "" } else { "s" };
        write!(f, "{} sweep{plural} a round", self.sweeps)?;
        if self.programmatic {
            write!(f, ", programmatic")?;
        }
        Ok(())
    }
}

/// One system to relax: `x[i] <- ((b[i] + x[i-1]) + x[i+1]) * w` (`x[-1] = x[n] = 0`) until
/// the largest change of a sweep is at most `tol`, or `max_steps` sweeps have run.
#[derive(Debug, Clone, PartialEq)]
pub struct Problem {
    /// Right-hand side, in [-1, 1).
    pub b: Vec<f32>,
    /// Start values, in [-1, 1).
    pub x0: Vec<f32>,
    /// The damping weight, `1 / diagonal` (diagonal > 2: the sweep is a contraction).
    pub w: f32,
    /// Stop when the largest change of a sweep is at most this.
    pub tol: f32,
    /// Stop after this many sweeps in any case (at least 1).
    pub max_steps: u32,
}

impl Problem {
    /// `n` unknowns with seeded random `b` and start values.
    pub fn random(n: u32, diagonal: f32, tol: f32, max_steps: u32, seed: u64) -> Problem {
        let mut rng = Rng::new(seed);
        let b = rng.vec_f32(n as usize, -1.0, 1.0);
        let x0 = rng.vec_f32(n as usize, -1.0, 1.0);
        Problem { b, x0, w: 1.0 / diagonal, tol, max_steps }
    }

    /// Unknowns.
    pub fn n(&self) -> u32 {
        self.b.len() as u32
    }
}

/// Where a loop stopped.
#[derive(Debug, Clone, PartialEq)]
pub struct Solution {
    /// The values after the last sweep.
    pub x: Vec<f32>,
    /// Sweeps run.
    pub steps: u32,
    /// The largest change of the last sweep.
    pub residual: f32,
}

impl Solution {
    /// Whether the loop stopped on the tolerance (not on `max_steps`).
    pub fn converged(&self, problem: &Problem) -> bool {
        self.residual <= problem.tol
    }

    /// Bit-exact comparison; on a difference, what differs.
    pub fn difference(&self, other: &Solution) -> Option<String> {
        if self.steps != other.steps {
            return Some(format!("{} steps, want {}", self.steps, other.steps));
        }
        if self.residual.to_bits() != other.residual.to_bits() {
            return Some(format!("residual {:e}, want {:e}", self.residual, other.residual));
        }
        if self.x.len() != other.x.len() {
            return Some(format!("{} values, want {}", self.x.len(), other.x.len()));
        }
        let i = self.x.iter().zip(&other.x).position(|(a, b)| a.to_bits() != b.to_bits())?;
        Some(format!("x[{i}] = {:e}, want {:e}", self.x[i], other.x[i]))
    }
}

/// The CPU model: the kernels' loop, operation for operation in `f32` (Rust does not fuse
/// multiply-adds; the kernels use `__fadd_rn`/`__fmul_rn`, which nvcc does not fuse either).
///
/// ```
/// use cuda_graphs_conditional::relax::{solve_cpu, Problem};
/// let problem = Problem::random(64, 2.5, 1e-4, 10_000, 1);
/// let solution = solve_cpu(&problem);
/// assert!(solution.converged(&problem) && solution.steps > 1);
/// ```
pub fn solve_cpu(problem: &Problem) -> Solution {
    let n = problem.b.len();
    let mut x = problem.x0.clone();
    let mut old = vec![0.0f32; n + 2];
    let mut steps = 0;
    loop {
        old[1..=n].copy_from_slice(&x);
        let mut residual = 0.0f32;
        for i in 0..n {
            let next = ((problem.b[i] + old[i]) + old[i + 2]) * problem.w;
            residual = residual.max((next - old[i + 1]).abs());
            x[i] = next;
        }
        steps += 1;
        if !(residual > problem.tol && steps < problem.max_steps) {
            return Solution { x, steps, residual };
        }
    }
}

/// The launch geometry of a sweep: one block, a whole number of warps covering `n`.
fn sweep_config(n: u32) -> LaunchConfig {
    LaunchConfig::new(1u32, n.div_ceil(32).max(1) * 32)
}

/// `cgc_relax_host`'s arguments: `x`, `b`, `n`, `w`, `tol`, `max_steps`, `state`, `flag`.
type HostStepArgs = (DevicePtr<f32>, DevicePtr<f32>, u32, f32, f32, u32, DevicePtr<u32>, DevicePtr<u32>);

/// A problem on the device, with a WHILE graph over it and what the host loops need.
pub struct RelaxBench {
    stream: Stream,
    x0: DeviceBuffer<f32>,
    x: DeviceBuffer<f32>,
    b: DeviceBuffer<f32>,
    state: DeviceBuffer<u32>,
    readback: PinnedBuffer<u32>,
    flag: MappedBuffer<u32>,
    start: Event,
    end: Event,
    exec: GraphExec<HostLaunch>,
    problem: Problem,
    rounds: Rounds,
}

impl RelaxBench {
    /// Uploads `problem` and builds its WHILE graph: one WHILE node, whose handle starts at 1
    /// on every launch (so the body runs at least once) and whose body is `rounds.sweeps`
    /// sweeps in a row; the last sweep of the loop sets the handle to 0.
    pub fn new(problem: &Problem, rounds: Rounds) -> Result<RelaxBench> {
        let x0 = DeviceBuffer::from_slice(&problem.x0)?;
        let x = DeviceBuffer::from_slice(&problem.x0)?;
        let b = DeviceBuffer::from_slice(&problem.b)?;
        let state = DeviceBuffer::<u32>::zeroed(3)?;

        let graph = Graph::new()?;
        let handle = graph.conditional_handle(Some(1))?;
        let (_loop, body) = graph.add_while(&handle, &[])?;
        let args =
            (handle, x.ptr(), b.ptr(), problem.n(), problem.w, problem.tol, problem.max_steps, state.ptr());
        let mut previous: Option<KernelNode> = None;
        for _ in 0..rounds.sweeps.max(1) {
            let deps: Vec<Dependency> = match &previous {
                Some(node) if rounds.programmatic => vec![Dependency::programmatic(node)],
                Some(node) => vec![Dependency::full(node)],
                None => Vec::new(),
            };
            let attributes = KernelAttributes::default();
            let config = sweep_config(problem.n());
            previous =
                Some(body.add_kernel_with(cgc_relax_while(), config, args.clone(), &attributes, &deps)?);
        }
        let exec = graph.instantiate::<HostLaunch>(Default::default())?;

        Ok(RelaxBench {
            stream: Stream::new()?,
            x0,
            x,
            b,
            state,
            readback: PinnedBuffer::zeroed(3)?,
            flag: MappedBuffer::zeroed(1)?,
            start: Event::new()?,
            end: Event::new()?,
            exec,
            problem: problem.clone(),
            rounds,
        })
    }

    /// Puts the start values back and zeroes the step counter (queued, not timed).
    fn reset(&mut self) -> Result<()> {
        self.x.copy_from_device_async(&self.x0, &self.stream)?;
        self.state.memset_async(0, &self.stream)
    }

    /// Runs the WHILE graph once (one launch, every step on the device) and returns the
    /// solution and the time between events around the launch, in ms.
    pub fn run_while(&mut self) -> Result<(Solution, f64)> {
        self.timed(|bench| bench.exec.launch(&bench.stream))
    }

    /// Runs the copy loop: launch a round of sweeps, copy the state to pinned memory, wait for
    /// the copy, read the flag, repeat while it says so. Returns the solution and the time
    /// between events around the whole loop, in ms.
    pub fn run_copy_loop(&mut self) -> Result<(Solution, f64)> {
        let args = self.host_step_args(self.state.ptr().offset(2)?);
        self.host_driven(|bench| {
            bench.launch_round(&args)?;
            bench.state.copy_to_pinned_async(&mut bench.readback, &bench.stream)?;
            Ok(bench.readback.as_slice()?[2] != 0)
        })
    }

    /// Runs the mapped-flag loop, the cheapest host-driven one: launch a round of sweeps, which
    /// write their decision straight into mapped host memory, wait for the stream, read the
    /// flag in place (no copy), repeat while it says so. Returns the solution and the time
    /// between events around the whole loop, in ms.
    pub fn run_mapped_loop(&mut self) -> Result<(Solution, f64)> {
        let args = self.host_step_args(self.flag.ptr());
        self.host_driven(|bench| {
            bench.launch_round(&args)?;
            bench.stream.synchronize()?;
            Ok(bench.flag.load(0) != 0)
        })
    }

    /// Queues one round of host-loop sweeps on the stream.
    fn launch_round(&self, args: &HostStepArgs) -> Result<()> {
        let config = sweep_config(self.problem.n());
        let attributes = if self.rounds.programmatic {
            LaunchAttributes::programmatic()
        } else {
            LaunchAttributes::default()
        };
        for _ in 0..self.rounds.sweeps.max(1) {
            cgc_relax_host().launch_with(&self.stream, config, &attributes, args.clone())?;
        }
        Ok(())
    }

    /// The arguments of `cgc_relax_host`, its decision going to `flag`.
    fn host_step_args(&self, flag: DevicePtr<u32>) -> HostStepArgs {
        let p = &self.problem;
        (self.x.ptr(), self.b.ptr(), p.n(), p.w, p.tol, p.max_steps, self.state.ptr(), flag)
    }

    /// A host-driven loop: `step` (queue a round of sweeps, wait for its decision, return it)
    /// until it says stop, timed by [`timed`](Self::timed). The kernels stop by themselves at
    /// `max_steps`; the bound here only guards against a broken flag.
    fn host_driven(
        &mut self, mut step: impl FnMut(&mut RelaxBench) -> Result<bool>,
    ) -> Result<(Solution, f64)> {
        let max_steps = self.problem.max_steps;
        self.timed(|bench| {
            for _ in 0..max_steps {
                if !step(bench)? {
                    break;
                }
            }
            Ok(())
        })
    }

    /// Puts the start values back, then runs `work` between two events on the stream and
    /// returns the solution and the time between the events, in ms.
    fn timed(&mut self, work: impl FnOnce(&mut RelaxBench) -> Result<()>) -> Result<(Solution, f64)> {
        self.reset()?;
        self.start.record(&self.stream)?;
        work(self)?;
        self.end.record(&self.stream)?;
        self.end.synchronize()?;
        let ms = f64::from(Event::elapsed_ms(&self.start, &self.end)?);
        Ok((self.solution()?, ms))
    }

    fn solution(&self) -> Result<Solution> {
        let state = self.state.to_vec()?;
        Ok(Solution { x: self.x.to_vec()?, steps: state[0], residual: f32::from_bits(state[1]) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_model_stops_on_the_tolerance_or_the_step_limit() {
        let problem = Problem::random(256, 2.05, 1e-4, 100_000, 7);
        let solution = solve_cpu(&problem);
        assert!(solution.converged(&problem));
        assert!(solution.steps > 100, "{} steps", solution.steps);
        let capped = Problem { max_steps: 5, ..problem.clone() };
        let stopped = solve_cpu(&capped);
        assert_eq!(stopped.steps, 5);
        assert!(!stopped.converged(&capped));
        // One step of the model is the formula.
        let one = solve_cpu(&Problem { max_steps: 1, ..problem.clone() });
        let want0 = (problem.b[0] + problem.x0[1]) * problem.w;
        assert_eq!(one.x[0].to_bits(), want0.to_bits());
    }

    #[test]
    fn differences_are_named() {
        let a = Solution { x: vec![1.0, 2.0], steps: 3, residual: 0.5 };
        assert_eq!(a.difference(&a.clone()), None);
        let b = Solution { x: vec![1.0, 2.5], ..a.clone() };
        assert!(a.difference(&b).unwrap().contains("x[1]"));
        let c = Solution { steps: 4, ..a.clone() };
        assert!(a.difference(&c).unwrap().contains("steps"));
    }
}

/// The kernels declared in this file against their C++ parameter types (`check_types` needs
/// no GPU: it reads the signature functions cuda-build compiled next to the kernels).
#[cfg(test)]
mod kernel_declarations {
    use super::*;

    #[test]
    fn match_the_cpp_parameter_types() {
        chapter_common::assert_kernel_types! { cgc_relax_while, cgc_relax_host }
    }
}
