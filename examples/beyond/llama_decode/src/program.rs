//! `llama_decode` as a [`ChapterProgram`]: what its `main` and the tests drive. It is not a
//! chapter program (the chapter runner does not list it); the trait gives it the same flags,
//! report and exit status as the others.

use chapter_common::{Book, ChapterProgram, ExampleError, Report};

use crate::Options;

/// The program (see the crate docs) as a [`ChapterProgram`].
pub struct Program;

impl ChapterProgram for Program {
    const NAME: &'static str = crate::NAME;
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
        crate::book()
    }
}
