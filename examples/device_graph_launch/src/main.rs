//! `device_graph_launch`: a work graph of 1 to 64 nodes launched once per iteration from the
//! host (launch + synchronize) or from a self-relaunching scheduler kernel (fire-and-forget,
//! tail, sibling), every iteration checked; then each device-launch limit hit on purpose and
//! reported as an error. Prints the report (text or `--json`); exits non-zero when a check
//! fails or CUDA reports an error.
//!
//! Flags: the `#[arg(long)]` fields of [`device_graph_launch::Options`], and the common ones.

use std::process::ExitCode;

use device_graph_launch::Program;

/// The first line of `--help`.
const ABOUT: &str = "Device graph launch (fire-and-forget, tail, sibling, self-relaunch) vs host launch \
                     with a sync per iteration, by graph width; the 120 fire-and-forget and 255 \
                     tail-launch limits and the one-pending-launch rule hit on purpose.";

/// The flag that is not a field of the options.
#[derive(Debug, clap::Args)]
struct Switches {
    /// Leave out the modes whose scheduler spin-waits for the work graph (sibling,
    /// fire_and_forget_batched): where the work graph cannot run beside its scheduler, the
    /// spin waits out its 2 s timeout.
    #[arg(long)]
    no_spin: bool,
}

fn main() -> ExitCode {
    chapter_common::main_with_extra_flags::<Program, Switches>(ABOUT, |switches, options| {
        if switches.no_spin {
            *options = options.clone().without_spinning_modes();
        }
    })
}
