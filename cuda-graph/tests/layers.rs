//! Every CUDA call of the crate goes through `src/runtime.rs`, the host-function guard,
//! checked without a GPU. (The crate's layering, and that no workspace crate has an import
//! circle, is checked by the workspace's `tests/tests/layers.rs`.)

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

/// The CUDA functions of the bindings (`cudart-graph-sys`): `pub fn cudaXxx(` declarations.
fn binding_functions() -> std::collections::BTreeSet<String> {
    let bindings = std::fs::read_to_string("../cudart-graph-sys/src/bindings.rs")
        .expect("the bindings beside this crate");
    bindings
        .split("pub fn ")
        .skip(1)
        .map(|rest| rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect::<String>())
        .filter(|name| name.starts_with("cuda"))
        .collect()
}

/// Every CUDA call of the crate refuses inside a host function (`src/runtime.rs`): no module
/// but `runtime` (and `lib.rs`'s public `sys` re-export) names `cudart_graph_sys`, and every
/// CUDA function a module names through `sys::` (called, or taken as a function pointer) is
/// one `runtime` guards, or returns no status (`cudaGetErrorString`, `cudaGetErrorName`).
#[test]
fn every_cuda_call_goes_through_the_host_function_guard() {
    let sources = sources_under(Path::new("src"), "");
    let functions = binding_functions();
    let runtime = &sources.iter().find(|(path, _)| path == "runtime.rs").expect("runtime.rs").1;
    let guarded: std::collections::BTreeSet<String> = runtime
        .lines()
        .filter_map(|line| line.trim().strip_prefix("fn cuda"))
        .map(|rest| format!("cuda{}", rest.split('(').next().unwrap()))
        .collect();
    assert!(guarded.len() > 50, "runtime.rs guards {} functions", guarded.len());
    let unguarded_ok = ["cudaGetErrorString", "cudaGetErrorName"];
    let mut found = Vec::new();
    for (path, code) in sources.iter().filter(|(path, _)| path != "runtime.rs") {
        for (number, line) in code.lines().enumerate() {
            let line = line.split("//").next().unwrap();
            if path != "lib.rs" && line.contains("cudart_graph_sys") {
                found.push(format!(
                    "{path}:{}: names cudart_graph_sys (use crate::runtime as sys)",
                    number + 1
                ));
            }
            for part in line.split("sys::").skip(1) {
                let name: String = part.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                if functions.contains(&name)
                    && !guarded.contains(&name)
                    && !unguarded_ok.contains(&name.as_str())
                {
                    found.push(format!("{path}:{}: `{name}` is not guarded in runtime.rs", number + 1));
                }
            }
        }
    }
    assert!(found.is_empty(), "CUDA calls that bypass the host-function guard:\n{}", found.join("\n"));
}
