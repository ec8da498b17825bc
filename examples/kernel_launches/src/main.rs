//! `kernel_launches`: times many tiny kernel launches on a stream against one graph of the
//! same kernels (and graphs of fewer nodes launched more often), checks that every launch ran
//! once and in order, and prints the report (text or `--json`). Exits non-zero when a check
//! fails or CUDA reports an error.
//!
//! Flags: the `#[arg(long)]` fields of [`kernel_launches::Options`], and the common ones.

use std::process::ExitCode;

use kernel_launches::Program;

/// The first line of `--help`.
const ABOUT: &str = "Many tiny launches vs one graph of the same kernels: µs per kernel each way, and by \
                     graph size.";

/// `--sweep`, kept apart from the options: without it, the default sweep loses the sizes above
/// `--kernels`.
#[derive(Debug, clap::Args)]
struct Sweep {
    /// Smaller graph sizes to compare, comma-separated (default: 1,10,100, or 1,10 with --quick).
    #[arg(long, value_name = "SIZES", value_delimiter = ',')]
    sweep: Option<Vec<u32>>,
}

fn main() -> ExitCode {
    chapter_common::main_with_extra_flags::<Program, Sweep>(ABOUT, |flag, options| match flag.sweep {
        Some(sweep) => options.sweep = sweep,
        None => {
            let kernels = options.kernels;
            options.sweep.retain(|&size| size <= kernels);
        }
    })
}
