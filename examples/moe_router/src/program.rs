//! `moe_router` as a [`ChapterProgram`]: what its `main`, the chapter runner and the tests drive.

use chapter_common::{Book, ChapterProgram, ExampleError, Report};

use crate::Options;

/// The `moe_router` program (see the crate docs).
pub struct Program;

impl ChapterProgram for Program {
    const NAME: &'static str = "moe_router";
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
            note: "The device-launch guide's sketch (route: from thread 0 of block 0, a \
                   fire-and-forget process_expert grid of 256-thread blocks sized (count + 255) / 256 per \
                   expert with tokens, then a 1 x 256 reduce_results tail launch) states no token, expert \
                   or hidden sizes and times nothing. The sizes, expert graphs and host-driven way are \
                   the port's.",
        }
    }
}
