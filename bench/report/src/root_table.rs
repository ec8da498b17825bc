//! The table of the repository's top README, written from a results folder's `bench.csv`
//! (`cuda-graph-bench --readme-table bench/results`, or `cuda-graph-bench-report
//! --readme-table bench/results` without CUDA), so that README's figures come from the
//! committed run: a test (bench's `tests/root_readme.rs`) fails when the two differ.

use std::fmt::Write as _;

use crate::operations::{
    CDP_FROM_DEVICE, CDP_FROM_HOST, DEVICE_FIRE_AND_FORGET, DEVICE_TAIL, GRAPH_REPLAY, HOST_SYNC,
    INSTANTIATE, LOOP_HOST_SYNC, LOOP_SELF_RELAUNCH, LOOP_WHILE_NODE, STREAM_LAUNCH,
    STREAM_LAUNCH_PROGRAMMATIC, UPDATE,
};
use crate::over_runs;
use crate::row::Row;
use crate::table::figure;

/// One line of the table: its label and the rows it gives, `/`-separated.
struct Line {
    label: &'static str,
    rows: &'static [(&'static str, &'static str)],
}

const LINES: [Line; 9] = [
    Line { label: "stream launch, empty kernel", rows: &[(STREAM_LAUNCH, "launches=1000")] },
    Line {
        label: "stream launch, empty kernel, programmatic serialization",
        rows: &[(STREAM_LAUNCH_PROGRAMMATIC, "launches=1000")],
    },
    Line { label: "graph replay, 100-node chain", rows: &[(GRAPH_REPLAY, "nodes=100")] },
    Line { label: "graph instantiate, 100 nodes", rows: &[(INSTANTIATE, "nodes=100")] },
    Line { label: "graph exec update, 100 nodes", rows: &[(UPDATE, "nodes=100")] },
    Line {
        label: "loop of 5000 steps: host sync / WHILE node / device self-relaunch",
        rows: &[
            (LOOP_HOST_SYNC, "steps=5000"),
            (LOOP_WHILE_NODE, "steps=5000"),
            (LOOP_SELF_RELAUNCH, "steps=5000"),
        ],
    },
    Line {
        label: "CDP child launch, from the device / from the host",
        rows: &[(CDP_FROM_DEVICE, "children=1000"), (CDP_FROM_HOST, "children=1000")],
    },
    Line {
        label: "1-wide graph: host launch + sync / device fire-and-forget / device tail",
        rows: &[(HOST_SYNC, "width=1"), (DEVICE_FIRE_AND_FORGET, "width=1"), (DEVICE_TAIL, "width=1")],
    },
    Line {
        label: "64-wide graph: host launch + sync / device fire-and-forget / device tail",
        rows: &[(HOST_SYNC, "width=64"), (DEVICE_FIRE_AND_FORGET, "width=64"), (DEVICE_TAIL, "width=64")],
    },
];

/// The top README's table from each run's rows: Rust and C++ are the medians over the runs of
/// each run's median, Rust/C++ the median of the runs' ratios (as the results README gives
/// them); with several runs, a last column gives the ratios' spread over the runs. A row the
/// runs lack reads `-`.
pub fn root_readme_table(runs: &[Vec<Row>]) -> String {
    let merged = over_runs::merge(runs);
    let many = runs.len() > 1;
    let mut out = String::from("| operation | Rust | C++ | Rust/C++ |");
    out += if many {
        " Rust/C++ over the runs |\n|---|---:|---:|---:|---:|\n"
    } else {
        "\n|---|---:|---:|---:|\n"
    };
    for line in &LINES {
        let found: Vec<Option<&Row>> = line
            .rows
            .iter()
            .map(|(operation, parameter)| {
                merged.iter().find(|row| row.operation == *operation && row.parameter == *parameter)
            })
            .collect();
        let unit = found.iter().flatten().next().map_or("", |row| row.unit.as_str());
        let join = |cell: &dyn Fn(&Row) -> String| {
            found.iter().map(|row| row.map_or("-".to_string(), cell)).collect::<Vec<_>>().join(" / ")
        };
        let ratios = |row: &Row| over_runs::ratios(runs, row);
        let _ = write!(
            out,
            "| {} | {} {unit} | {} {unit} | {} |",
            line.label,
            join(&|row| figure(row.rust())),
            join(&|row| figure(row.cpp())),
            join(&|row| format!("{:.3}", ratios(row).median())),
        );
        if many {
            let _ = write!(
                out,
                " {} |",
                join(&|row| {
                    let (low, high) = ratios(row).range();
                    format!("{low:.3}-{high:.3}")
                })
            );
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(operation: &str, parameter: &str, unit: &str, rust: f64, cpp: f64) -> Row {
        Row::single(operation, parameter, unit, rust, cpp)
    }

    #[test]
    fn lines_join_their_rows_and_missing_rows_read_a_dash() {
        let run = vec![
            row(STREAM_LAUNCH, "launches=1000", "µs/launch", 4.482, 4.516),
            row(LOOP_HOST_SYNC, "steps=5000", "µs/step", 12.99, 12.5),
            row(LOOP_SELF_RELAUNCH, "steps=5000", "µs/step", 4.2, 4.2),
        ];
        let table = root_readme_table(std::slice::from_ref(&run));
        assert!(
            table.starts_with("| operation | Rust | C++ | Rust/C++ |\n|---|---:|---:|---:|\n"),
            "{table}"
        );
        assert!(
            table.contains("| stream launch, empty kernel | 4.482 µs/launch | 4.516 µs/launch | 0.992 |"),
            "{table}"
        );
        assert!(
            table.contains("| 12.99 / - / 4.200 µs/step | 12.50 / - / 4.200 µs/step | 1.039 / - / 1.000 |"),
            "{table}"
        );
        let mut slower = run.clone();
        slower[0] = row(STREAM_LAUNCH, "launches=1000", "µs/launch", 5.0, 4.0);
        let table = root_readme_table(&[run.clone(), slower, run]);
        assert!(
            table.contains(
                "| stream launch, empty kernel | 4.482 µs/launch | 4.516 µs/launch | 0.992 | 0.992-1.250 |"
            ),
            "{table}"
        );
    }
}
