//! `dynamic_parallelism` as a [`ChapterProgram`]: what its `main`, the chapter runner and the tests drive.

use chapter_common::{Book, ChapterProgram, ExampleError, Preset, Report};

use crate::Options;

/// The `dynamic_parallelism` program (see the crate docs).
pub struct Program;

impl ChapterProgram for Program {
    const NAME: &'static str = "dynamic_parallelism";
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
        Book::Broken {
            why: "its device graph launch never runs",
            preset: Some(Preset { quick: Options { runs: 2, ..options.clone() }, options }),
            note: "dynamic_parallelism.cu: its device graph launch never happens (the graph is \
                   instantiated without the device-launch flag, the launching kernel runs on a plain \
                   stream, where CUDA 13.0 refuses it with error 801, and errors are ignored), and its \
                   CDP part times one parent launch with no host-driven version to compare. The preset \
                   runs that CDP part's sizes: 10 000 values, 100 cells of 100, fronts in ~2% of the \
                   cells (the listing launches 2 children of 100 values: glibc's rand() puts 2 of its \
                   10 sampled values above 0.5; the count here depends on the seed and is reported), \
                   one pass per timed run. Not as listed: a warp per cell decides (the listing: one thread per value, 40 \
                   blocks of 256, every 1000th value checked), a child is 1 block of 128 (the listing: \
                   2 of 64) summing 2 sub-samples per value (the listing: one multiply-add), and a tail \
                   launch reduces. The port's default: 1024 cells of 256, ~12% refined, 200 passes.",
        }
    }
}
