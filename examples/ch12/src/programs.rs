//! The chapter programs, from the one list of them ([`chapter_registry::all`]), in the
//! chapter's order. Each runs one example crate's `run(&Options)` in-process, on the port's own
//! workload or on the chapter listing's ([`chapter_common::ChapterProgram::book`]), and its
//! report becomes a table cell.

use chapter_common::Verdict;
pub use chapter_registry::{all, Program, Workload};

use crate::table::{Cell, Check};

/// Runs `program` on `workload` (quick: its small sizes) and returns its cell; a listing with
/// no workload to run gives a failed cell that says so (the runner does not ask for one).
pub fn cell(program: &Program, workload: Workload, quick: bool) -> Cell {
    match program.run(workload, quick) {
        Some(Ok(report)) => {
            let headline = program.headline(&report);
            match report.verdict() {
                Verdict::Pass => Cell { check: Check::Pass, headline, failures: Vec::new() },
                Verdict::Fail(failed) => Cell { check: Check::Fail, headline, failures: failed },
            }
        }
        Some(Err(err)) => Cell::failed(err.to_string()),
        None => Cell::failed(format!("{}: the chapter has no workload of its own to run here", program.name)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_program_without_a_workload_of_the_chapters_refuses_to_run_one() {
        let program = all().into_iter().find(|p| !p.listing.runs).expect("a program without a listing");
        let cell = cell(&program, Workload::Book, true);
        assert_eq!(cell.check, Check::Fail);
        assert!(cell.headline.contains("no workload of its own"), "{}", cell.headline);
    }
}
