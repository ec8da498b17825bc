//! What every chapter program shares: the [`ChapterProgram`] contract and the `main` it drives
//! ([`main_with`], and [`main_with_flags`] that reads the program's options from its flags),
//! the common flags, the [`ExampleError`] every program returns, option checks
//! ([`OptionCheck`]), the chapter's own workload of each program ([`Book`], `--book`), a seeded
//! RNG for inputs that are never all zeros, medians of repeated runs, the synthetic work several
//! programs share, and the report each program prints (text, or one JSON object with `--json`)
//! with its PASS/FAIL verdict. Feature `charts`: the font the programs that draw charts share
//! (`chart_font`).

mod book;
#[cfg(feature = "charts")]
pub mod chart_font;
mod device;
mod error;
mod flags;
mod kernel_chain;
mod listing;
mod options;
mod program;
mod report;
mod rng;
mod stats;
mod testing;
mod work;

pub use book::{Book, Preset};
pub use device::{device_note, device_zero};
pub use error::ExampleError;
pub use flags::{assert_flags_refused, flag_value, main_with_extra_flags, main_with_flags, NoExtraFlags};
/// True when compute-sanitizer watches this process (`scripts/gpu-sanitize` sets
/// `UNDER_SANITIZER`, `bash .gpu/run` takes `SANITIZE`): `ch12 --quick` then runs each
/// program's [`ChapterProgram::sanitizer_options`].
pub use gpu_test_support::under_sanitizer;
pub use kernel_chain::{Chain, KernelChain};
pub use listing::{ulp_distance, Arithmetic, ListingNote};
pub use options::OptionCheck;
pub use program::{assert_options_checked, main_with, ChapterProgram};
pub use report::{Report, Verdict};
pub use rng::Rng;
pub use stats::{median, time_ms, Samples};
pub use testing::assert_kernel_types;
pub use work::{apply_all, lcg_rounds, MulAdd};

/// Flags every program takes (flatten into its own clap struct with `#[command(flatten)]`).
#[derive(Debug, Clone, clap::Args)]
pub struct CommonArgs {
    /// Small sizes: a quick correctness pass, not for figures.
    #[arg(long)]
    pub quick: bool,
    /// Run the workload of the chapter's own listing (sizes, launch shapes, iterations)
    /// instead of this port's; with --quick, the same shapes smaller.
    #[arg(long)]
    pub book: bool,
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
        CommonArgs { quick: false, book: false, json: false, seed: 0x5eed, runs: 5 }
    }
}
