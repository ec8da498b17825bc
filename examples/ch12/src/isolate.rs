//! Each program in a process of its own: the runner starts itself again with `--child NAME`,
//! and the child prints its row as one marked JSON line.
//!
//! Why: the chapter's programs are separate executables, and a CUDA context that one program
//! breaks (a sticky error such as 719) stays broken for every later program of the same
//! process. A fresh process per program gives each one a fresh context and allocator, so its
//! verdict and figures are its own. `--in-process` runs them all in one process instead.

use std::process::Command;

use serde_json::{json, Value};

use crate::programs::Program;
use crate::table::{Check, Row};

/// Marks the child's result line on its standard output.
const MARKER: &str = "ch12-row: ";

/// The line a child prints for its row.
pub fn child_line(row: &Row) -> String {
    let value = json!({"check": row.check.label(), "headline": row.headline, "failures": row.failures});
    format!("{MARKER}{value}")
}

/// Runs `program` in a child process of this executable and reads its row back. A child that
/// ends without a row (a crash, an abort) gives a failed row that says how it ended.
pub fn run_in_child(program: &Program, quick: bool) -> Row {
    let mut command = match std::env::current_exe() {
        Ok(exe) => Command::new(exe),
        Err(err) => return failed(program, format!("cannot find this executable to start a child: {err}")),
    };
    command.args(["--child", program.name]);
    if quick {
        command.arg("--quick");
    }
    match command.output() {
        Ok(output) => {
            let stdout = String::from_utf8_lossy(&output.stdout);
            match parse_child_output(program, &stdout) {
                Some(row) => row,
                None => {
                    let stderr = String::from_utf8_lossy(&output.stderr);
                    let tail: Vec<&str> = stderr.lines().rev().take(5).collect();
                    let tail: Vec<&str> = tail.into_iter().rev().collect();
                    failed(
                        program,
                        format!(
                            "its process ended without a result ({}): {}",
                            output.status,
                            tail.join(" / ")
                        ),
                    )
                }
            }
        }
        Err(err) => failed(program, format!("cannot start its process: {err}")),
    }
}

/// The row in a child's standard output, if it printed one.
pub fn parse_child_output(program: &Program, stdout: &str) -> Option<Row> {
    let line = stdout.lines().rev().find_map(|l| l.strip_prefix(MARKER))?;
    let value: Value = serde_json::from_str(line).ok()?;
    let check = match value["check"].as_str()? {
        "PASS" => Check::Pass,
        "SKIPPED" => Check::Skipped,
        _ => Check::Fail,
    };
    let failures =
        value["failures"].as_array()?.iter().filter_map(|f| f.as_str().map(str::to_string)).collect();
    Some(Row {
        program: program.name,
        check,
        headline: value["headline"].as_str()?.to_string(),
        claim: program.claim,
        failures,
    })
}

fn failed(program: &Program, why: String) -> Row {
    Row {
        program: program.name,
        check: Check::Fail,
        headline: format!("error: {why}"),
        claim: program.claim,
        failures: vec![why],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn program() -> Program {
        Program { name: "cuda_graphs", claim: "1.35-1.40x", run: |_, _| unreachable!() }
    }

    #[test]
    fn a_childs_row_survives_the_round_trip() {
        let row = Row {
            program: "cuda_graphs",
            check: Check::Fail,
            headline: "graph 1.2x".into(),
            claim: "1.35-1.40x",
            failures: vec!["checksum equal: 1 vs 2".into()],
        };
        let stdout = format!("something the program printed\n{}\n", child_line(&row));
        assert_eq!(parse_child_output(&program(), &stdout), Some(row));
    }

    #[test]
    fn output_without_a_row_is_none() {
        assert_eq!(parse_child_output(&program(), "thread 'main' panicked\n"), None);
        assert_eq!(parse_child_output(&program(), "ch12-row: {not json"), None);
    }
}
