//! `atomic_work_queue` as a [`ChapterProgram`]: what its `main`, the chapter runner and the tests drive.

use chapter_common::{Book, ChapterProgram, ExampleError, Preset, Report};

use crate::Options;

/// The `atomic_work_queue` program (see the crate docs).
pub struct Program;

impl ChapterProgram for Program {
    const NAME: &'static str = "atomic_work_queue";
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
        let options = Options::listing();
        Book::Preset {
            preset: Preset { quick: Options { items: 1 << 16, runs: 2, ..options.clone() }, options },
            note: "atomic_work_queue.cu: 1 Mi items, item i does i & 255 rounds; the static kernel and the \
                   warp-batched dynamic kernel (32 per claim) each over 4096 blocks of 256, one thread per \
                   item. Not as listed: a round is an LCG step and an xorshift, checked against the CPU \
                   (the listing adds sinf(x) * cosf(x) and checks nothing), and the figure is the median \
                   of timed runs after a warm-up (the listing times each kernel once, static first, cold). \
                   The port's default: 4 Mi items with hot spans on a persistent grid, six kernels.",
        }
    }
}
