//! `kernel_launches` as a [`ChapterProgram`]: what its `main`, the chapter runner and the tests drive.

use chapter_common::{Book, ChapterProgram, ExampleError, Report};

use crate::Options;

/// The `kernel_launches` program (see the crate docs).
pub struct Program;

impl ChapterProgram for Program {
    const NAME: &'static str = "kernel_launches";
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
        Book::NoListing {
            note: "The chapter gives no program for this: its text states a gap of about 3 µs per \
                   stream launch and that replacing 300 kernel launches by 100 graph replays made the \
                   whole about 25% faster, with no kernels or sizes. The empty kernels and the sweep of \
                   graph sizes are the port's.",
        }
    }
}
