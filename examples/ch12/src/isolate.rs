//! Each run in a process of its own: the runner starts itself again with `--child NAME` (and
//! `--book` for the chapter listing's workload), and the child prints its cell as one marked
//! JSON line.
//!
//! Why: the chapter's programs are separate executables, and a CUDA context that one program
//! breaks (a sticky error such as 719) stays broken for every later program of the same
//! process. A fresh process per run gives each one a fresh context and allocator, so its
//! verdict and figures are its own. `--in-process` runs them all in one process instead.

use std::process::Command;

use serde_json::Value;

use crate::programs::{Program, Workload};
use crate::table::Cell;

/// Marks the child's result line on its standard output.
const MARKER: &str = "ch12-row: ";

/// The line a child prints for its cell.
pub fn child_line(cell: &Cell) -> String {
    format!("{MARKER}{}", cell.to_json())
}

/// The flags that make this executable a child running `program` on `workload`.
pub fn child_args(program: &Program, workload: Workload, quick: bool) -> Vec<&'static str> {
    let mut args = vec!["--child", program.name];
    if workload == Workload::Book {
        args.push("--book");
    }
    if quick {
        args.push("--quick");
    }
    args
}

/// Runs `program` on `workload` in a child process of this executable and reads its cell back.
/// A child that ends without a cell (a crash, an abort) gives a failed cell that says how it
/// ended.
pub fn run_in_child(program: &Program, workload: Workload, quick: bool) -> Cell {
    let mut command = match std::env::current_exe() {
        Ok(exe) => Command::new(exe),
        Err(err) => return Cell::failed(format!("cannot find this executable to start a child: {err}")),
    };
    command.args(child_args(program, workload, quick));
    match command.output() {
        Ok(output) => {
            let stdout = String::from_utf8_lossy(&output.stdout);
            match parse_child_output(&stdout) {
                Some(cell) => cell,
                None => {
                    let stderr = String::from_utf8_lossy(&output.stderr);
                    let tail: Vec<&str> = stderr.lines().rev().take(5).collect();
                    let tail: Vec<&str> = tail.into_iter().rev().collect();
                    Cell::failed(format!(
                        "its process ended without a result ({}): {}",
                        output.status,
                        tail.join(" / ")
                    ))
                }
            }
        }
        Err(err) => Cell::failed(format!("cannot start its process: {err}")),
    }
}

/// The cell in a child's standard output, if it printed one.
pub fn parse_child_output(stdout: &str) -> Option<Cell> {
    let line = stdout.lines().rev().find_map(|l| l.strip_prefix(MARKER))?;
    let value: Value = serde_json::from_str(line).ok()?;
    Cell::from_json(&value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::Check;

    #[test]
    fn a_childs_cell_survives_the_round_trip() {
        let cell = Cell {
            check: Check::Fail,
            headline: "graph 1.2x".into(),
            failures: vec!["checksum equal: 1 vs 2".into()],
        };
        let stdout = format!("something the program printed\n{}\n", child_line(&cell));
        assert_eq!(parse_child_output(&stdout), Some(cell));
    }

    #[test]
    fn output_without_a_cell_is_none() {
        assert_eq!(parse_child_output("thread 'main' panicked\n"), None);
        assert_eq!(parse_child_output("ch12-row: {not json"), None);
    }

    #[test]
    fn a_book_child_is_asked_for_the_listings_workload() {
        let program = crate::programs::all().into_iter().next().expect("a program");
        assert_eq!(
            child_args(&program, Workload::Book, true),
            ["--child", program.name, "--book", "--quick"]
        );
        assert_eq!(child_args(&program, Workload::Port, false), ["--child", program.name]);
    }
}
