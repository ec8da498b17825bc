//! What every chapter program shares: the common flags, a seeded RNG for inputs that are never
//! all zeros, medians of repeated runs, and the report each program prints (text, or one JSON
//! object with `--json`) with its PASS/FAIL verdict.

mod report;
mod rng;
mod stats;

pub use report::{Report, Verdict};
pub use rng::Rng;
pub use stats::{median, time_ms, Samples};

/// Flags every program takes (flatten into its own clap struct with `#[command(flatten)]`).
#[derive(Debug, Clone, clap::Args)]
pub struct CommonArgs {
    /// Print the report as one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    /// Seed of the random inputs.
    #[arg(long, default_value_t = 0x5eed)]
    pub seed: u64,
    /// Timed runs; the figures are their median.
    #[arg(long, default_value_t = 5)]
    pub runs: usize,
}

impl Default for CommonArgs {
    fn default() -> CommonArgs {
        CommonArgs { json: false, seed: 0x5eed, runs: 5 }
    }
}
