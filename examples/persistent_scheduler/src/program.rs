//! `persistent_scheduler` as a [`ChapterProgram`]: what its `main`, the chapter runner and the tests drive.

use chapter_common::{Book, ChapterProgram, ExampleError, Report};

use crate::Options;

/// The `persistent_scheduler` program (see the crate docs).
pub struct Program;

impl ChapterProgram for Program {
    const NAME: &'static str = "persistent_scheduler";
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
            note: "The chapter describes this program without listing it: a persistent kernel \
                   that pulls work from a queue, and a scheduler sketch that fire-and-forgets one graph \
                   and tail-launches itself while should_continue(state), with no sizes or timing; its \
                   \"up to ~3x\" is the summary of queues and graphs combined. Items, kinds and batches \
                   are the port's.",
        }
    }
}
