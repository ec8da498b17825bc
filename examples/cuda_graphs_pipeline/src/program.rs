//! `cuda_graphs_pipeline` as a [`ChapterProgram`]: what its `main`, the chapter runner and the tests drive.

use chapter_common::{Book, ChapterProgram, ExampleError, Preset, Report};

use crate::Options;

/// The `cuda_graphs_pipeline` program (see the crate docs).
pub struct Program;

impl ChapterProgram for Program {
    const NAME: &'static str = "cuda_graphs_pipeline";
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
        let options = Options { iters: 20_000, per_stage_alloc: false, ..Options::default() };
        Book::Preset {
            preset: Preset {
                quick: Options { iters: 400, capture_iters: 100, runs: 2, ..options.clone() },
                options,
            },
            note: "baseline_cuda_graphs.cu vs optimized_cuda_graphs.cu: 16 Ki values, six stages per \
                   iteration in blocks of 128, 20 000 iterations; the baseline launches the stages one by \
                   one over preallocated memory, the optimized program captures 1000 iterations (6000 \
                   kernel nodes) and replays them 20 times; CUDA events around the timed loop after one \
                   warm-up. Not as listed: a stage is three integer affine passes (the listing: tanhf, \
                   __sinf, __cosf), stages alternate between two buffers (the listing: in place), the stream \
                   is blocking and capture thread-local (the listing: non-blocking, global), and the figure \
                   is a median of runs. The port's default: 10 000 iterations per run, plus a stream way \
                   that allocates per stage.",
        }
    }
}
