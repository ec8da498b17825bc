//! Every refusal names its reason (a `Refusal` variant), checked without a GPU: only the
//! refusals of `src/graph/`, not typed yet, may still be made from text alone, through the
//! transitional `CudaError::invalid` (which makes `Refusal::UntypedLegacy`). Once `graph/` is
//! converted, both go and this test with them.

use std::path::Path;

/// The crate's sources under `dir`: (path relative to `src/`, text).
fn sources_under(dir: &Path, prefix: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut paths: Vec<_> = std::fs::read_dir(dir).unwrap().map(|entry| entry.unwrap().path()).collect();
    paths.sort();
    for path in paths {
        let name = path.file_name().unwrap().to_str().unwrap().to_owned();
        if path.is_dir() {
            out.extend(sources_under(&path, &format!("{prefix}{name}/")));
        } else if name.ends_with(".rs") {
            out.push((format!("{prefix}{name}"), std::fs::read_to_string(&path).unwrap()));
        }
    }
    out
}

#[test]
fn only_graph_refusals_are_still_made_from_text() {
    let sources = sources_under(Path::new("src"), "");
    assert!(sources.iter().any(|(path, _)| path == "error/refusal.rs"), "run from the crate's folder");
    let mut untyped = Vec::new();
    let mut in_graph = 0;
    for (path, code) in &sources {
        // Where the transitional constructor and variant are defined.
        if path == "error.rs" || path == "error/refusal.rs" {
            continue;
        }
        for (number, line) in code.lines().enumerate() {
            let made_from_text = line.contains("CudaError::invalid(") || line.contains("UntypedLegacy");
            if !made_from_text {
                continue;
            }
            if path.starts_with("graph/") {
                in_graph += 1;
            } else {
                untyped.push(format!("{path}:{}: {}", number + 1, line.trim()));
            }
        }
    }
    assert!(untyped.is_empty(), "refusals without a typed reason outside graph/:\n{}", untyped.join("\n"));
    println!("{in_graph} refusals of graph/ still made from text (CudaError::invalid)");
}
