//! `graph_conditional_runtime` as a [`ChapterProgram`]: what its `main`, the chapter runner and the tests drive.

use chapter_common::{Book, ChapterProgram, ExampleError, Preset, Report};

use crate::Options;

/// The `graph_conditional_runtime` program (see the crate docs).
pub struct Program;

impl ChapterProgram for Program {
    const NAME: &'static str = "graph_conditional_runtime";
    type Options = Options;

    fn quick_options() -> Options {
        Options::quick()
    }

    fn set_runs_and_seed(options: &mut Options, runs: usize, seed: u64) {
        (options.runs, options.seed) = (runs, seed);
    }

    fn validate(options: &Options) -> Result<(), ExampleError> {
        options.validate()
    }

    fn run(options: &Options) -> Result<Report, ExampleError> {
        crate::run(options)
    }

    fn headline(report: &Report) -> String {
        crate::headline(report)
    }

    fn book() -> Book<Options> {
        let options =
            Options { iters: 5000, size: 1 << 16, rounds: 32, threads_per_block: 256, ..Options::default() };
        Book::Preset {
            preset: Preset {
                quick: Options { iters: 100, size: 1 << 12, runs: 2, ..options.clone() },
                options,
            },
            note: "optimized_graph_conditional_runtime.cu: 64 Ki values in blocks of 256; a one-thread \
                   predicate sets an IF/ELSE node whose bodies are an update of 32 rounds per value and \
                   a one-multiply update; 10 warm-up launches, then 5000 launches between CUDA events. Its \
                   baseline is a PyTorch program that makes no decision, so the host-branching way here \
                   is the port's. Not as listed: the predicate is one warp folding 32 samples and its \
                   decision changes with the data (the listing's mean of 1024 values always picks the \
                   32-round body), rounds are integer LCG steps, and the figure is a median of runs. \
                   The port's default: 16 Ki values, 16 rounds, 1000 iterations.",
        }
    }
}
