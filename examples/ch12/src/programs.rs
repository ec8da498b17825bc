//! The chapter programs, in the chapter's order. Each entry runs one example crate's
//! `run(&Options)` in-process, on the port's own workload or on the chapter listing's
//! ([`ChapterProgram::book`]), and turns its report into a table cell.
//!
//! Every example crate implements [`ChapterProgram`] on its `Program`: its options at chapter
//! scale (`Default`) and quick, `run`, `headline` (the figure the table shows) and `book`.

use chapter_common::{ChapterProgram, ExampleError, Report, Verdict};

use crate::table::{Cell, Check, Listing};

/// Which workload a run uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Workload {
    /// The port's own (its `Options::default()`, or quick).
    Port,
    /// The chapter listing's ([`ChapterProgram::book_options`]).
    Book,
}

/// One chapter program.
pub struct Program {
    /// The example crate's name.
    pub name: &'static str,
    /// What the chapter's own program measured on an H100.
    pub claim: &'static str,
    /// What the chapter's listing is for it.
    pub listing: Listing,
    /// Runs it on a workload (quick: small sizes) and returns its cell (see [`Program::cell`]).
    pub run: fn(Workload, bool) -> Cell,
}

impl Program {
    /// Runs it on `workload` (quick: small sizes) and returns its cell.
    pub fn cell(&self, workload: Workload, quick: bool) -> Cell {
        (self.run)(workload, quick)
    }
}

/// The cell for one finished run.
fn cell(outcome: Result<Report, ExampleError>, headline: fn(&Report) -> String) -> Cell {
    match outcome {
        Ok(report) => match report.verdict() {
            Verdict::Pass => Cell { check: Check::Pass, headline: headline(&report), failures: Vec::new() },
            Verdict::Fail(failed) => {
                Cell { check: Check::Fail, headline: headline(&report), failures: failed }
            }
        },
        Err(err) => Cell::failed(err.to_string()),
    }
}

/// Runs `P` on `workload` (quick: its small sizes) and returns its cell; a listing with no
/// workload to run gives a failed cell that says so (the runner does not ask for one).
fn run_program<P: ChapterProgram>(workload: Workload, quick: bool) -> Cell {
    let options = match workload {
        Workload::Port if quick && chapter_common::under_sanitizer() => Some(P::sanitizer_options()),
        Workload::Port if quick => Some(P::quick_options()),
        Workload::Port => Some(P::Options::default()),
        Workload::Book => P::book_options(quick),
    };
    match options {
        Some(options) => cell(P::run(&options), P::headline),
        None => Cell::failed(format!("{}: the chapter has no workload of its own to run here", P::NAME)),
    }
}

/// The entry for the chapter program `P`, with what the chapter claims for it.
fn program<P: ChapterProgram>(claim: &'static str) -> Program {
    Program { name: P::NAME, claim, listing: Listing::of(&P::book()), run: run_program::<P> }
}

/// Every ported program, in the chapter's order.
pub fn all() -> Vec<Program> {
    vec![
        program::<atomic_work_queue::Program>("dynamic 1.81-1.98x over static"),
        program::<cuda_graphs::Program>("graph replay 1.35-1.40x over stream launches"),
        program::<cuda_graphs_pipeline::Program>("graph 3.03x over stream (0.0080 vs 0.0242 ms/iter)"),
        program::<cuda_graphs_conditional::Program>("branch and loop on the device, no host round trip"),
        program::<graph_conditional_runtime::Program>(
            "device-side branch beats sync + read flag + launch on the host",
        ),
        program::<dynamic_parallelism::Program>(
            "children launched on the device: 3 host launches to 1, 25% faster",
        ),
        program::<device_graph_launch::Program>(
            "device launch ~2x lower latency than host, flat in graph width",
        ),
        program::<moe_router::Program>(
            "experts dispatched on the device: no host round trip per routing step",
        ),
        program::<persistent_scheduler::Program>("persistent queue kernel up to ~3x over a host-driven loop"),
        program::<streams_events::Program>("3+ streams cut copy+compute time 40-60% (1.7-2.5x)"),
        program::<graph_memory::Program>(
            "allocate outside the graph: fixed addresses, memory reused across replays",
        ),
        program::<kernel_launches::Program>("~3 µs gap per stream launch, none in a graph"),
        program::<kernel_fusion::Program>("fusion cuts global-memory round trips of a memory-bound chain"),
        program::<graph_bandwidth::Program>("same GB/s for big copies; graphs only cut launch cost"),
        // (one line per ported program; keep the chapter's order)
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_program_says_what_the_chapters_listing_is() {
        for program in all() {
            let listing = program.listing;
            assert!(listing.note.len() > 40, "{}: a note says what the listing is", program.name);
            assert!(
                ["same", "preset", "no listing", "broken"].contains(&listing.kind),
                "{}: {}",
                program.name,
                listing.kind
            );
            assert_eq!(listing.why.is_some(), listing.kind == "broken", "{}", program.name);
        }
    }

    #[test]
    fn the_chapters_broken_programs_are_named_as_such() {
        let kind = |name: &str| all().into_iter().find(|p| p.name == name).map(|p| p.listing.kind);
        assert_eq!(kind("cuda_graphs_conditional"), Some("broken"));
        assert_eq!(kind("dynamic_parallelism"), Some("broken"));
        assert_eq!(kind("atomic_work_queue"), Some("preset"));
        assert_eq!(kind("cuda_graphs"), Some("preset"));
    }

    #[test]
    fn a_program_without_a_workload_of_the_chapters_refuses_to_run_one() {
        let program = all().into_iter().find(|p| !p.listing.runs).expect("a program without a listing");
        let cell = program.cell(Workload::Book, true);
        assert_eq!(cell.check, Check::Fail);
        assert!(cell.headline.contains("no workload of its own"), "{}", cell.headline);
    }
}
