//! `cuda_graphs` as a [`ChapterProgram`]: what its `main`, the chapter runner and the tests drive.

use chapter_common::{Book, ChapterProgram, ExampleError, Preset, Report};

use crate::Options;

/// The `cuda_graphs` program (see the crate docs).
pub struct Program;

impl ChapterProgram for Program {
    const NAME: &'static str = "cuda_graphs";
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
        let options = Options {
            elements: 1 << 20,
            kernels: 3,
            iters: 100,
            threads_per_block: 256,
            ..Options::default()
        };
        Book::Preset {
            preset: Preset {
                quick: Options { elements: 1 << 14, iters: 10, runs: 2, ..options.clone() },
                options,
            },
            note: "cuda_graphs.cu: 1 Mi elements, three kernels per iteration, each 4096 blocks of 256, 100 \
                   iterations, stream launches vs replays of the captured three, CUDA events around the 100. \
                   Not as listed: the three kernels are one integer step with three seeded constants, \
                   checked against the CPU (the listing's are float maps, unchecked); the figure is the \
                   median of timed runs after a warm-up (the listing times each loop once, the stream loop \
                   first and cold); the listing's update demo (one kernel's grid resized) is not this \
                   port's. The port's default: 20 kernels of 4096 elements, 1000 iterations.",
        }
    }
}
