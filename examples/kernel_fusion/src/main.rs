//! `kernel_fusion`: times an elementwise chain run unfused, fused and as a graph of the unfused
//! kernels, checks every output against the CPU reference, and prints the report (text or
//! `--json`). Exits non-zero when a check fails or CUDA reports an error.
//!
//! Flags: the `#[arg(long)]` fields of [`kernel_fusion::Options`], and the common ones.

use std::process::ExitCode;

use kernel_fusion::Program;

/// The first line of `--help`.
const ABOUT: &str = "Kernel fusion: each pass `x += sqrt(clamp(x*a + y, lo, hi) + c) * g + b` as six \
                     kernels launched one by one, as one fused kernel, and as a graph of the six; time \
                     per pass and effective bandwidth of each.";

/// The flag that is not a field of the options.
#[derive(Debug, clap::Args)]
struct Switches {
    /// Time the headline size only, no sweep.
    #[arg(long, conflicts_with = "sweep")]
    no_sweep: bool,
}

fn main() -> ExitCode {
    chapter_common::main_with_extra_flags::<Program, Switches>(ABOUT, |switches, options| {
        if switches.no_sweep {
            options.sweep.clear();
        }
    })
}
