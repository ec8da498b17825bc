//! `cuda_graphs_conditional` as a [`ChapterProgram`]: what its `main`, the chapter runner and the tests drive.

use chapter_common::{Book, ChapterProgram, ExampleError, Report};

use crate::Options;

/// The `cuda_graphs_conditional` program (see the crate docs).
pub struct Program;

impl ChapterProgram for Program {
    const NAME: &'static str = "cuda_graphs_conditional";
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
}
