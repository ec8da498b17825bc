//! The chapter programs, in the chapter's order. Each entry runs one example crate's
//! `run(&Options)` in-process and turns its report into a table row.

use crate::table::Row;

/// One chapter program.
pub struct Program {
    /// The example crate's name.
    pub name: &'static str,
    /// What the chapter's own program measured on an H100.
    pub claim: &'static str,
    /// Runs it (quick: small sizes) and returns its row.
    pub run: fn(bool) -> Row,
}

/// Every ported program. Examples are added here as they are ported.
pub fn all() -> Vec<Program> {
    vec![Program {
        name: "atomic_work_queue",
        claim: "dynamic 1.81-1.98x over static",
        run: |quick| {
            use crate::table::Check;
            let options = if quick { atomic_work_queue::Options::quick() } else { Default::default() };
            let (check, headline) = match atomic_work_queue::run(&options) {
                Ok(report) if report.passed() => (Check::Pass, atomic_work_queue::headline(&report)),
                Ok(report) => (Check::Fail, atomic_work_queue::headline(&report)),
                Err(err) => (Check::Fail, format!("error: {err}")),
            };
            Row { program: "atomic_work_queue", check, headline, claim: "dynamic 1.81-1.98x over static" }
        },
    }]
}
