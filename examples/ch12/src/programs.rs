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
    Vec::new()
}
