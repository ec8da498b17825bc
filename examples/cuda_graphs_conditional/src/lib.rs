//! `cuda_graphs_conditional`: conditional graph nodes whose conditions are decided on the GPU.
//!
//! Two graphs, every condition set by a kernel of the graph with `cudaGraphSetConditional`:
//! 1. **Routing** ([`routing`]): one input per launch goes through an IF, an IF/ELSE whose
//!    "then" body holds a nested IF, and a four-way SWITCH, each deciding on a bit field of the
//!    input. Bodies record which of them ran (a per-input bit set and per-body counters) and
//!    both must equal a CPU model for every input; the first 64 inputs cover every path.
//! 2. **WHILE** ([`relax`]): damped Jacobi sweeps of a small tridiagonal system until the
//!    largest change of a sweep drops to the tolerance. The body's one kernel sweeps and, when
//!    done, clears the loop's condition, so the whole loop is one graph launch. The same work driven
//!    from the host (launch a sweep, copy the flag back, wait, read it, repeat) is the
//!    baseline. Both must stop after the CPU model's number of steps with its values, bit for
//!    bit; more problems (other seeds, tolerances, and one stopped by the step limit) are
//!    checked the same way.
//!
//! Figures are medians over `runs` timed runs after one warm-up (CUDA events); the headline is
//! the time per step of the host-driven loop over that of the WHILE loop
//! (`while_over_host_per_step`).

#![warn(missing_docs)]

mod program;

pub use program::Program;

pub mod relax;
pub mod routing;

use chapter_common::{Book, ExampleError, OptionCheck, Report, Samples};
use serde_json::json;

use relax::{solve_cpu, Problem, RelaxBench, Solution, MAX_UNKNOWNS};
use routing::{make_inputs, Routed, RoutingBench, BODIES};

/// What to run; the fields marked `#[arg(long)]` are also the binary's flags (see `--help`).
#[derive(Debug, Clone, PartialEq, clap::Args)]
pub struct Options {
    /// Timed runs after one warm-up; figures are their medians.
    #[arg(skip)]
    pub runs: usize,
    /// Seed of the inputs and the systems.
    #[arg(skip)]
    pub seed: u64,
    /// Inputs routed through the IF / IF-ELSE / SWITCH graph, one launch each (default 4096, or 256
    /// with --quick).
    #[arg(long, value_name = "N")]
    pub inputs: u32,
    /// Unknowns of the system the WHILE loop relaxes, 1..=1024; one block sweeps them (default
    /// 256).
    #[arg(long, value_name = "N")]
    pub size: u32,
    /// The system's diagonal, above 2: the closer to 2, the more steps the loop takes (default
    /// 2.05).
    #[arg(long, value_name = "D")]
    pub diagonal: f32,
    /// The loop stops when no value changes by more than this in a sweep (default 1e-4, or 1e-3
    /// with --quick).
    #[arg(long, value_name = "TOL")]
    pub tolerance: f32,
    /// The loop stops after this many steps in any case.
    #[arg(skip)]
    pub max_steps: u32,
    /// Further WHILE problems whose results are checked (not timed).
    #[arg(skip)]
    pub cases: u32,
}

impl Default for Options {
    /// 4096 routed inputs; a 256-unknown system with diagonal 2.05 relaxed to 1e-4 (several
    /// hundred steps, each a one-block kernel of a few microseconds: launch-bound, where a
    /// device loop pays off); 8 more checked problems; 5 runs.
    fn default() -> Options {
        Options {
            inputs: 4096,
            size: 256,
            diagonal: 2.05,
            tolerance: 1e-4,
            max_steps: 100_000,
            cases: 8,
            runs: 5,
            seed: 0x5eed,
        }
    }
}

impl Options {
    /// Small and fast (for tests and `--quick`): 256 inputs, a looser tolerance, 3 more
    /// problems, two runs.
    pub fn quick() -> Options {
        Options { inputs: 256, tolerance: 1e-3, cases: 3, runs: 2, ..Options::default() }
    }

    /// Refuses what the kernels cannot run, before any CUDA call.
    pub fn validate(&self) -> Result<(), ExampleError> {
        OptionCheck::new("cuda_graphs_conditional")
            .within("inputs", self.inputs, 1..=1 << 24)
            .rule("size", (1..=MAX_UNKNOWNS).contains(&self.size), || {
                format!("size must be 1..={MAX_UNKNOWNS} (one block sweeps the system), not {}", self.size)
            })
            .rule("diagonal", self.diagonal > 2.0 && self.diagonal.is_finite(), || {
                format!(
                    "diagonal must be finite and above 2 (or the sweep does not converge), not {}",
                    self.diagonal
                )
            })
            .rule("tolerance", self.tolerance >= 0.0 && self.tolerance.is_finite(), || {
                format!("tolerance must be finite and not negative, not {}", self.tolerance)
            })
            .within("max_steps", self.max_steps, 1..=10_000_000)
            .at_least("runs", self.runs, 1)
            .done()
    }

    fn problem(&self, seed: u64, tolerance: f32, max_steps: u32) -> Problem {
        Problem::random(self.size, self.diagonal, tolerance, max_steps, seed)
    }
}

/// The chapter's own listing for this program: what `--book` runs, or why it runs nothing
/// (see [`Book`]).
pub fn book() -> Book<Options> {
    Book::Broken {
        why: "does not compile on CUDA 13.0",
        preset: None,
        note: "cuda_graphs_conditional.cu calls cudaGraphAddConditionalNode, which \
               CUDA 13.0 does not declare (nvcc 13.0: identifier is undefined), and never sets the \
               condition (its cudaGraphSetConditional call is commented out; the host picks the path \
               from the batch size). What it times, one x *= scale kernel over 16 to 512 values, \
               1000 iterations, as stream launches, a captured graph and the conditional graph, has \
               no device-side decision to port; the routing graphs and the WHILE loop are the \
               port's.",
    }
}

/// Checks one loop's result against the model, keeping the first difference.
fn compare(first: &mut Option<String>, label: &str, got: &Solution, want: &Solution) {
    if first.is_none() {
        *first = got.difference(want).map(|d| format!("{label}: {d}"));
    }
}

/// Runs both graphs on device 0 and reports times, the per-step speedup and the checks.
///
/// Errors are CUDA's (no device, a failed launch) or invalid options; a wrong result is not an
/// error but a failed check in the report.
pub fn run(options: &Options) -> Result<Report, ExampleError> {
    options.validate()?;
    let (_, properties) = chapter_common::device_zero()?;

    // Routing: IF, IF/ELSE with a nested IF, SWITCH.
    let inputs = make_inputs(options.inputs as usize, options.seed);
    let want = Routed::expected(&inputs);
    let mut routing = RoutingBench::new(&inputs)?;
    let mut routing_ms = Samples::default();
    let mut routing_mismatch = None;
    let mut last_routed = None;
    for run in 0..=options.runs {
        let (routed, ms) = routing.run()?;
        if run > 0 {
            routing_ms.push(ms);
        }
        if routing_mismatch.is_none() {
            routing_mismatch = routed.difference(&want, &inputs).map(|d| format!("run {run}: {d}"));
        }
        last_routed = Some(routed);
    }

    // WHILE vs the host-driven loop, on the main problem.
    let problem = options.problem(options.seed, options.tolerance, options.max_steps);
    let model = solve_cpu(&problem);
    let mut bench = RelaxBench::new(&problem)?;
    let (mut while_ms, mut host_ms) = (Samples::default(), Samples::default());
    let (mut while_step_ms, mut host_step_ms) = (Samples::default(), Samples::default());
    let (mut while_mismatch, mut host_mismatch) = (None, None);
    for run in 0..=options.runs {
        let (solution, ms) = bench.run_while()?;
        compare(&mut while_mismatch, &format!("run {run}"), &solution, &model);
        if run > 0 {
            while_ms.push(ms);
            while_step_ms.push(ms / f64::from(solution.steps.max(1)));
        }
        let (solution, ms) = bench.run_host_loop()?;
        compare(&mut host_mismatch, &format!("run {run}"), &solution, &model);
        if run > 0 {
            host_ms.push(ms);
            host_step_ms.push(ms / f64::from(solution.steps.max(1)));
        }
    }

    // More problems, checked only: other seeds and tolerances, and one stopped by max_steps.
    let mut case_steps = Vec::new();
    for case in 0..options.cases {
        let tolerance = options.tolerance * [1.0, 10.0, 100.0, 0.5][case as usize % 4];
        let mut case_problem =
            options.problem(options.seed.wrapping_add(u64::from(case) + 1), tolerance, options.max_steps);
        if case + 1 == options.cases {
            case_problem.max_steps = (solve_cpu(&case_problem).steps / 2).max(1);
        }
        let case_model = solve_cpu(&case_problem);
        let mut case_bench = RelaxBench::new(&case_problem)?;
        let (solution, _) = case_bench.run_while()?;
        compare(&mut while_mismatch, &format!("case {case}"), &solution, &case_model);
        let (solution, _) = case_bench.run_host_loop()?;
        compare(&mut host_mismatch, &format!("case {case}"), &solution, &case_model);
        case_steps.push(json!({
            "case": case,
            "tolerance": tolerance,
            "max_steps": case_problem.max_steps,
            "steps": case_model.steps,
            "converged": case_model.converged(&case_problem),
        }));
    }

    let mut report = Report::new("cuda_graphs_conditional");
    let while_per_step = while_step_ms.median();
    let host_per_step = host_step_ms.median();
    report.figure("while_ms_per_step", while_per_step, "ms");
    report.figure("host_loop_ms_per_step", host_per_step, "ms");
    report.figure("while_over_host_per_step", host_per_step / while_per_step, "x");
    report.figure("while_ms", while_ms.median(), "ms");
    report.figure("host_loop_ms", host_ms.median(), "ms");
    report.figure("while_steps", f64::from(model.steps), "steps");
    report.figure("routing_ms_per_launch", routing_ms.median(), "ms");
    report.figure("routing_inputs", f64::from(options.inputs), "inputs");

    let routed = last_routed.unwrap_or_else(|| want.clone());
    report.check(
        "bodies that ran equal the CPU model",
        routing_mismatch.is_none(),
        match &routing_mismatch {
            None => format!(
                "{} runs x {} inputs through IF, IF/ELSE (+ nested IF) and SWITCH({}): every input's bodies and \
                 every counter",
                options.runs + 1,
                options.inputs,
                routing::SWITCH_CASES
            ),
            Some(first) => first.clone(),
        },
    );
    let loops = options.runs + 1 + options.cases as usize;
    report.check(
        "WHILE loop equals the CPU model",
        while_mismatch.is_none(),
        while_mismatch.clone().unwrap_or_else(|| {
            format!(
                "{loops} loops: steps, residual and every value bit for bit ({} steps on the main problem)",
                model.steps
            )
        }),
    );
    report.check(
        "host-driven loop equals the CPU model",
        host_mismatch.is_none(),
        host_mismatch
            .clone()
            .unwrap_or_else(|| format!("{loops} loops: steps, residual and every value bit for bit")),
    );

    report.note(chapter_common::device_note(&properties));
    report.note(format!(
        "WHILE: {} unknowns, diagonal {}, tolerance {:e}: {} steps, residual {:e} ({}); one launch of a graph \
         with one WHILE node vs a host loop of launch + async copy of the flag + wait, per step",
        options.size,
        options.diagonal,
        options.tolerance,
        model.steps,
        model.residual,
        if model.converged(&problem) { "converged" } else { "stopped by max_steps" },
    ));
    report.data(
        "bodies",
        json!(BODIES
            .iter()
            .zip(&routed.counters)
            .map(|(name, count)| (name.to_string(), json!(count)))
            .collect::<serde_json::Map<_, _>>()),
    );
    report.data("while_cases", json!(case_steps));
    let (while_min, while_max) = while_step_ms.range();
    let (host_min, host_max) = host_step_ms.range();
    report.data(
        "per_step_ms",
        json!({
            "while": {"median": while_per_step, "min": while_min, "max": while_max, "runs": while_step_ms.0},
            "host_loop": {"median": host_per_step, "min": host_min, "max": host_max, "runs": host_step_ms.0},
        }),
    );
    Ok(report)
}

/// The one-line summary for the chapter table, e.g.
/// `WHILE 5.20x per step over host loop (0.0030 vs 0.0156 ms/step)`.
///
/// ```
/// let mut report = chapter_common::Report::new("cuda_graphs_conditional");
/// report.figure("while_ms_per_step", 0.003, "ms");
/// report.figure("host_loop_ms_per_step", 0.0156, "ms");
/// report.figure("while_over_host_per_step", 0.0156 / 0.003, "x");
/// assert_eq!(
///     cuda_graphs_conditional::headline(&report),
///     "WHILE 5.20x per step over host loop (0.0030 vs 0.0156 ms/step)"
/// );
/// ```
pub fn headline(report: &Report) -> String {
    format!(
        "WHILE {:.2}x per step over host loop ({:.4} vs {:.4} ms/step)",
        report.figure_or_nan("while_over_host_per_step"),
        report.figure_or_nan("while_ms_per_step"),
        report.figure_or_nan("host_loop_ms_per_step")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_quick_are_valid_and_bad_options_are_refused_by_name() {
        assert!(Options::quick().inputs < Options::default().inputs);
        chapter_common::assert_options_checked::<Program>(&[(
            "max_steps",
            Options { max_steps: 0, ..Options::quick() },
        )]);
        chapter_common::assert_flags_refused::<Program>(&[
            "--inputs=0",
            "--size=2048",
            "--diagonal=2.0",
            "--tolerance=NaN",
        ]);
    }

    #[test]
    fn the_default_problem_is_launch_bound_and_converges() {
        let options = Options::default();
        let problem = options.problem(options.seed, options.tolerance, options.max_steps);
        let solution = solve_cpu(&problem);
        assert!(solution.converged(&problem));
        assert!((100..5000).contains(&solution.steps), "{} steps", solution.steps);
        let quick = Options::quick();
        let quick_problem = quick.problem(quick.seed, quick.tolerance, quick.max_steps);
        assert!(solve_cpu(&quick_problem).steps >= 20);
    }
}
