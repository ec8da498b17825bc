//! The results as a table: aligned text for the terminal, Markdown for the results README.
//! Over several runs, Rust and C++ are the medians of the runs' medians, Rust/C++ the median of
//! the runs' ratios, and two more columns give the spread over the runs (least-most) of Rust
//! and of the ratio.

use std::fmt::Write as _;

use crate::over_runs;
use crate::row::Row;

/// A figure with about four significant digits.
///
/// ```
/// use cuda_graph_bench_report::table::figure;
/// assert_eq!((figure(0.71234), figure(123.45), figure(f64::NAN)), ("0.712".into(), "123.5".into(), "n/a".into()));
/// ```
pub fn figure(value: f64) -> String {
    if !value.is_finite() {
        return "n/a".to_string();
    }
    let magnitude = value.abs();
    if magnitude >= 1000.0 {
        format!("{value:.0}")
    } else if magnitude >= 100.0 {
        format!("{value:.1}")
    } else if magnitude >= 10.0 {
        format!("{value:.2}")
    } else {
        format!("{value:.3}")
    }
}

/// `least-most` of `range`, each written by `write`.
fn spread((low, high): (f64, f64), write: fn(f64) -> String) -> String {
    format!("{}-{}", write(low), write(high))
}

/// The cells of each line: the header, then one line per row, over the runs.
fn cells(runs: &[Vec<Row>]) -> Vec<Vec<String>> {
    let many = runs.len() > 1;
    let header: &[&str] = if many {
        &["operation", "parameter", "Rust", "Rust, runs", "C++", "Rust/C++", "Rust/C++, runs", "unit"]
    } else {
        &["operation", "parameter", "Rust", "C++", "Rust/C++", "unit"]
    };
    let mut lines = vec![header.iter().map(|cell| cell.to_string()).collect()];
    for row in over_runs::merge(runs) {
        let ratios = over_runs::ratios(runs, &row);
        let mut line = vec![row.operation.clone(), row.parameter.clone(), figure(row.rust())];
        if many {
            line.push(spread(row.rust.range(), figure));
        }
        line.extend([figure(row.cpp()), format!("{:.3}", ratios.median())]);
        if many {
            line.push(spread(ratios.range(), |ratio| format!("{ratio:.3}")));
        }
        line.push(row.unit.clone());
        lines.push(line);
    }
    lines
}

/// The table for the terminal, columns aligned (figures right-aligned).
pub fn text_table(runs: &[Vec<Row>]) -> String {
    let lines = cells(runs);
    let columns = lines[0].len();
    let mut widths = vec![0usize; columns];
    for line in &lines {
        for (width, cell) in widths.iter_mut().zip(line) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    for line in &lines {
        let mut text = String::new();
        for (column, (cell, width)) in line.iter().zip(&widths).enumerate() {
            let pad = width - cell.chars().count();
            let sep = if column == 0 { "" } else { "  " };
            if (2..columns - 1).contains(&column) {
                let _ = write!(text, "{sep}{}{cell}", " ".repeat(pad));
            } else if column == columns - 1 {
                let _ = write!(text, "{sep}{cell}");
            } else {
                let _ = write!(text, "{sep}{cell}{}", " ".repeat(pad));
            }
        }
        out.push_str(text.trim_end());
        out.push('\n');
    }
    out
}

/// The same table in Markdown.
pub fn markdown_table(runs: &[Vec<Row>]) -> String {
    let lines = cells(runs);
    let mut out = String::new();
    for (index, line) in lines.iter().enumerate() {
        out.push_str("| ");
        out.push_str(&line.iter().map(|cell| cell.replace('|', "\\|")).collect::<Vec<_>>().join(" | "));
        out.push_str(" |\n");
        if index == 0 {
            let figures = vec!["---:"; line.len() - 3].join(" | ");
            let _ = writeln!(out, "| --- | --- | {figures} | --- |");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::row::Summary;
    use crate::samples::Samples;

    fn rows() -> Vec<Row> {
        let of = |values: Vec<f64>| Summary::of(&Samples(values));
        vec![
            Row::new(
                "stream launch, empty kernel",
                "launches=1000",
                "µs/launch",
                of(vec![2.0, 2.2, 2.1]),
                of(vec![2.0, 2.0, 2.0]),
            ),
            Row::single("graph instantiate", "nodes=100", "µs", 150.0, 140.0),
        ]
    }

    #[test]
    fn the_table_has_the_header_and_every_row() {
        let table = text_table(&[rows()]);
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines.len(), 1 + 2, "{table}");
        assert!(lines[0].starts_with("operation"), "{table}");
        assert!(
            lines[1].contains("2.100") && lines[1].contains("1.050") && lines[1].ends_with("µs/launch"),
            "{table}"
        );
        assert!(lines[2].starts_with("graph instantiate") && lines[2].ends_with("µs"), "{table}");
        assert!(!table.contains("pending"), "{table}");
        let md = markdown_table(&[rows()]);
        assert!(md.contains("| --- | --- | ---: |"), "{md}");
    }

    #[test]
    fn several_runs_give_medians_over_runs_with_their_spread() {
        let mut second = rows();
        (second[0].rust, second[0].cpp) = (Summary::one(3.0), Summary::one(2.0));
        let mut third = rows();
        (third[0].rust, third[0].cpp) = (Summary::one(2.4), Summary::one(2.0));
        let runs = vec![rows(), second, third];
        let table = text_table(&runs);
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines.len(), 1 + 2, "{table}");
        assert!(lines[0].contains("Rust, runs") && lines[0].contains("Rust/C++, runs"), "{table}");
        // Rust medians 2.1, 3.0, 2.4: median 2.4; ratios 1.05, 1.5, 1.2: median 1.2.
        let cells: Vec<&str> = lines[1].split("  ").map(str::trim).filter(|cell| !cell.is_empty()).collect();
        assert_eq!(
            cells[2..],
            ["2.400", "2.100-3.000", "2.000", "1.200", "1.050-1.500", "µs/launch"],
            "{table}"
        );
        assert!(lines[2].contains("150.0-150.0"), "{table}");
        let md = markdown_table(&runs);
        assert!(md.contains("| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |"), "{md}");
    }

    #[test]
    fn figures() {
        assert_eq!(figure(0.71234), "0.712");
        assert_eq!(figure(12.345), "12.35");
        assert_eq!(figure(123.45), "123.5");
        assert_eq!(figure(12345.6), "12346");
        assert_eq!(figure(f64::NAN), "n/a");
    }
}
