//! bench/README.md's figures are the committed results': every decimal figure in it must be a
//! figure of a committed file under `bench/results/` (equal once rounded to the README's
//! decimals), or one of the differences listed in `DERIVED`, each computed from held figures;
//! the programmatic-chain table must equal the rows of `results/README.md` it cites. Quoting a
//! run that is not committed fails this test, as does an edited number unless it happens to
//! equal another figure of the committed files (they hold thousands: a loose net for prose,
//! where the table's check is exact).

use std::path::{Path, PathBuf};

/// The package folder, where `cargo test` and `.gpu/run` start tests.
const PACKAGE: &str = ".";

/// Figures of the README that are differences or quotients of held figures, with the words
/// they stand in, so that each stays where it was written.
const DERIVED: &[(&str, &str)] = &[
    ("0.05", "the runs agree within 0.05 µs"),
    ("0.19", "(0.19 µs per node)"),
    ("0.25", "the nodes start 0.25 µs apart"),
    ("0.005", "within 0.005 µs of each other"),
    ("0.08", "on the same exec: 0.08 µs per step"),
    ("0.11", "the example's sweep 0.11 µs above it"),
    ("0.05", "A leaner sweep saves 0.05–0.07 µs"),
    ("0.07", "A leaner sweep saves 0.05–0.07 µs"),
    ("0.05", "the one-barrier sweep is 0.05–0.07 µs"),
    ("0.07", "the one-barrier sweep is 0.05–0.07 µs"),
    ("0.13", "an empty body is 0.13 µs"),
    ("0.45", "the machine moves the step by 0.45"),
    ("0.05", "the kernel's shape is 0.05 µs"),
    ("0.003", "0.003 µs); neither are blocking streams"),
    ("0.6", "about 0.6 µs of 8.8"),
];

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files_under(&path, out);
        } else if path.extension().is_none_or(|e| e != "png") {
            out.push(path);
        }
    }
}

/// Every decimal number of `text` (digits, a point, digits), with its byte offset; with
/// `standalone`, only those not glued to a following letter or number (a README's figures,
/// not parts of names or versions).
fn decimals(text: &str, standalone: bool) -> Vec<(usize, &str)> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let starts_number = bytes[i].is_ascii_digit()
            && (i == 0
                || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'.' || bytes[i - 1] == b'_'));
        if !starts_number {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && bytes[i].is_ascii_digit() {
            i += 1;
        }
        if i + 1 < bytes.len() && bytes[i] == b'.' && bytes[i + 1].is_ascii_digit() {
            i += 1;
            while i < bytes.len() && bytes[i].is_ascii_digit() {
                i += 1;
            }
            let followed = i < bytes.len()
                && (bytes[i].is_ascii_alphanumeric()
                    || bytes[i] == b'.' && bytes.get(i + 1).is_some_and(u8::is_ascii_digit));
            if !(standalone && followed) {
                out.push((start, &text[start..i]));
            }
        }
    }
    out
}

/// Whether some figure of `held` rounds to `figure` at its number of decimals.
fn is_held(figure: &str, held: &[f64]) -> bool {
    let places = figure.split('.').nth(1).map_or(0, str::len) as i32;
    let value: f64 = figure.parse().unwrap();
    let scale = 10f64.powi(places);
    held.iter().any(|v| ((v * scale).round() - value * scale).abs() < 1e-6)
}

#[test]
fn every_figure_is_a_committed_files_or_a_listed_difference() {
    let package = Path::new(PACKAGE);
    let readme = std::fs::read_to_string(package.join("README.md")).expect("bench/README.md");
    let mut files = Vec::new();
    files_under(&package.join("results"), &mut files);
    let mut held = Vec::new();
    for file in &files {
        let text = std::fs::read(file).unwrap();
        let text = String::from_utf8_lossy(&text);
        held.extend(decimals(&text, false).into_iter().filter_map(|(_, f)| f.parse::<f64>().ok()));
    }
    assert!(held.len() > 1000, "the committed results hold figures: {} found in {files:?}", held.len());
    let unheld: Vec<String> = decimals(&readme, true)
        .into_iter()
        .filter(|(_, figure)| !is_held(figure, &held))
        .filter(|&(at, figure)| {
            !DERIVED.iter().any(|&(derived, words)| {
                derived == figure && readme.match_indices(words).any(|(w, _)| w <= at && at < w + words.len())
            })
        })
        .map(|(at, figure)| {
            let line = readme[..at].lines().count();
            format!("line {line}: {figure}")
        })
        .collect();
    assert!(
        unheld.is_empty(),
        "bench/README.md quotes figures no committed file under bench/results/ holds (and not \
         listed as differences): {unheld:?}"
    );
}

/// The `results/README.md` table row of `operation` at `parameter`: Rust and C++ medians.
fn results_row(results: &str, operation: &str, parameter: &str) -> (String, String) {
    let prefix = format!("| {operation} | {parameter} |");
    let line = results.lines().find(|l| l.starts_with(&prefix)).unwrap_or_else(|| panic!("no row {prefix}"));
    let cells: Vec<&str> = line.split('|').map(str::trim).collect();
    (cells[3].to_string(), cells[5].to_string())
}

#[test]
fn the_programmatic_chain_table_is_the_committed_runs() {
    let package = Path::new(PACKAGE);
    let readme = std::fs::read_to_string(package.join("README.md")).expect("bench/README.md");
    let results =
        std::fs::read_to_string(package.join("results/README.md")).expect("bench/results/README.md");
    let table = readme
        .split("<!-- pdl-table: results/README.md -->")
        .nth(1)
        .expect("bench/README.md marks its programmatic-chain table");
    for (row, chain) in [("empty kernels", "empty chain"), ("`*counter += 1`", "read-modify-write chain")] {
        let (plain_rust, plain_cpp) =
            results_row(&results, &format!("graph replay, {chain}, plain edges"), "nodes=100");
        let (pdl_rust, pdl_cpp) =
            results_row(&results, &format!("graph replay, {chain}, programmatic edges"), "nodes=100");
        let gain = plain_rust.parse::<f64>().unwrap() / pdl_rust.parse::<f64>().unwrap();
        let want = format!("| {row} | {plain_rust} / {plain_cpp} | {pdl_rust} / {pdl_cpp} | {gain:.2}x |");
        assert!(table.lines().take(5).any(|l| l == want), "bench/README.md's table should have\n{want}");
    }
}
