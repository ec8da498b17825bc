//! One chapter program as a list entry: its name, the chapter's claim, its listing, and what
//! the runner and the tests do with it, whatever its options' type.

use chapter_common::{ChapterProgram, CommonArgs, ExampleError, Report};

use crate::Listing;

/// Which workload a run uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Workload {
    /// The port's own (its `Options::default()`, or quick).
    Port,
    /// The chapter listing's ([`ChapterProgram::book_options`]).
    Book,
}

/// One chapter program of the list: a [`ChapterProgram`] with its options' type erased, so that
/// programs of different options sit in one `Vec`.
#[derive(Clone, Copy)]
pub struct Program {
    /// The example crate's name ([`ChapterProgram::NAME`]).
    pub name: &'static str,
    /// What the chapter's own program measured on an H100.
    pub claim: &'static str,
    /// What the chapter's listing is for it ([`ChapterProgram::book`]).
    pub listing: Listing,
    run: fn(Workload, bool) -> Option<Result<Report, ExampleError>>,
    headline: fn(&Report) -> String,
    assert_options_checked: fn(),
    run_with_no_timed_runs: fn() -> Result<Report, ExampleError>,
}

impl Program {
    /// The entry for the chapter program `P`, with what the chapter claims for it.
    pub fn of<P: ChapterProgram>(claim: &'static str) -> Program {
        Program {
            name: P::NAME,
            claim,
            listing: Listing::of(&P::book()),
            run: run::<P>,
            headline: P::headline,
            assert_options_checked: || chapter_common::assert_options_checked::<P>(&[]),
            run_with_no_timed_runs: run_with_no_timed_runs::<P>,
        }
    }

    /// Runs it on `workload` (quick: its small sizes; quick under a sanitizer: its
    /// [`ChapterProgram::sanitizer_options`]), or `None` when the chapter has no workload of its
    /// own that the port can run ([`Listing::runs`] is false).
    pub fn run(&self, workload: Workload, quick: bool) -> Option<Result<Report, ExampleError>> {
        (self.run)(workload, quick)
    }

    /// The one-line summary of one of its reports for the chapter table.
    pub fn headline(&self, report: &Report) -> String {
        (self.headline)(report)
    }

    /// Panics unless its default, quick and chapter-workload options pass its checks and zero
    /// timed runs is refused ([`chapter_common::assert_options_checked`], with no options of
    /// its own to refuse).
    pub fn assert_options_checked(&self) {
        (self.assert_options_checked)()
    }

    /// Runs its quick options with zero timed runs: refused options, which every program must
    /// return as [`ExampleError::Options`] before any CUDA call (not panic).
    pub fn run_with_no_timed_runs(&self) -> Result<Report, ExampleError> {
        (self.run_with_no_timed_runs)()
    }
}

impl std::fmt::Debug for Program {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Program")
            .field("name", &self.name)
            .field("claim", &self.claim)
            .field("listing", &self.listing)
            .finish_non_exhaustive()
    }
}

/// Runs `P` on `workload` (quick: its small sizes), or `None` when it has no such workload.
fn run<P: ChapterProgram>(workload: Workload, quick: bool) -> Option<Result<Report, ExampleError>> {
    let options = match workload {
        Workload::Port if quick && chapter_common::under_sanitizer() => Some(P::sanitizer_options()),
        Workload::Port if quick => Some(P::quick_options()),
        Workload::Port => Some(P::Options::default()),
        Workload::Book => P::book_options(quick),
    };
    options.map(|options| P::run(&options))
}

/// Runs `P`'s quick options with zero timed runs (and the flags' default seed).
fn run_with_no_timed_runs<P: ChapterProgram>() -> Result<Report, ExampleError> {
    let mut options = P::quick_options();
    P::set_runs_and_seed(&mut options, 0, CommonArgs::default().seed);
    P::run(&options)
}
