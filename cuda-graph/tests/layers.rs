//! The crate's layering, checked without a GPU: the crate docs (`src/lib.rs`, "# Layers")
//! list the top-level modules by layer, lowest first, and every `crate::` (or `super::` that
//! reaches the crate root) path in a module must name a module of a lower layer, or its own
//! module. Paths through `lib.rs`'s re-exports (`crate::CudaError`) count as paths to the
//! module they re-export. `lib.rs` itself (the re-exports) is not checked.

use std::collections::BTreeMap;
use std::path::Path;

/// A crate's sources: (path relative to `src/`, text), `lib.rs` included.
type Sources = Vec<(String, String)>;

fn read_sources(dir: &Path, prefix: &str, out: &mut Sources) {
    let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().map(|entry| entry.unwrap().path()).collect();
    entries.sort();
    for path in entries {
        let name = path.file_name().unwrap().to_str().unwrap().to_owned();
        if path.is_dir() {
            read_sources(&path, &format!("{prefix}{name}/"), out);
        } else if name.ends_with(".rs") {
            out.push((format!("{prefix}{name}"), std::fs::read_to_string(&path).unwrap()));
        }
    }
}

/// The layer of each top-level module, from the numbered "# Layers" list of `lib.rs`'s docs:
/// ``//! 3. `device`, `stream` — ...`` puts both modules in layer 3.
fn layers(lib_rs: &str) -> BTreeMap<String, usize> {
    let mut layers = BTreeMap::new();
    let mut in_section = false;
    for line in lib_rs.lines() {
        let Some(doc) = line.strip_prefix("//!") else { continue };
        let doc = doc.trim();
        if doc.starts_with('#') {
            in_section = doc == "# Layers";
            continue;
        }
        if !in_section {
            continue;
        }
        let Some((number, rest)) = doc.split_once(". ") else { continue };
        let Ok(layer) = number.parse::<usize>() else { continue };
        let names = rest.split(" — ").next().unwrap();
        for name in names.split(',') {
            let name = name.trim().trim_matches('`');
            assert!(!name.is_empty() && !name.contains(' '), "layer {layer}: cannot read `{names}`");
            assert!(layers.insert(name.to_owned(), layer).is_none(), "`{name}` is listed twice");
        }
    }
    layers
}

/// `lib.rs`'s `pub use module::{A, B}` / `pub use module::A;` re-exports: name → module.
fn reexports(lib_rs: &str) -> BTreeMap<String, String> {
    let mut map = BTreeMap::new();
    let code: String =
        lib_rs.lines().filter(|line| !line.trim_start().starts_with("//")).collect::<Vec<_>>().join("\n");
    for statement in code.split(';') {
        let Some(path) = statement.trim().strip_prefix("pub use ") else { continue };
        let Some((module, items)) = path.split_once("::") else { continue };
        let items = items.trim().trim_start_matches('{').trim_end_matches('}');
        for item in items.split(',') {
            let item = item.trim();
            let name = item.rsplit("::").next().unwrap().split(" as ").last().unwrap().trim();
            if !name.is_empty() {
                map.insert(name.to_owned(), module.trim().to_owned());
            }
        }
    }
    map
}

/// The top-level module a source file belongs to (`graph/exec.rs` → `graph`).
fn module_of(path: &str) -> &str {
    let first = path.split('/').next().unwrap();
    first.strip_suffix(".rs").unwrap_or(first)
}

/// What each `crate::`/`$crate::`/root-reaching `super::` path in `code` names first: the
/// identifiers right after the prefix (each item of a `{...}` group). Comments are skipped.
fn crate_paths(path: &str, code: &str) -> Vec<(usize, String)> {
    // `super::` in `src/a/b.rs` names `a` (the same module); two in a row reach the root and
    // count like `crate::`, as does one in `src/a.rs` or `src/a/mod.rs`, except `super::*`
    // (what an inline test module uses to name its own file's module).
    let depth = path.matches('/').count() + usize::from(!path.ends_with("mod.rs"));
    let mut found = Vec::new();
    for (number, line) in code.lines().enumerate() {
        let line = line.split("//").next().unwrap();
        let mut rest = line;
        while let Some(at) = rest.find("crate::").or_else(|| rest.find("super::")) {
            let (prefix_len, reaches_root) = if rest[at..].starts_with("crate::") {
                (7, true)
            } else {
                let mut supers = 0;
                let mut tail = &rest[at..];
                while let Some(next) = tail.strip_prefix("super::") {
                    supers += 1;
                    tail = next;
                }
                (7 * supers, supers >= depth && !tail.starts_with('*'))
            };
            let after = &rest[at + prefix_len..];
            rest = after;
            if !reaches_root {
                continue;
            }
            let names: Vec<&str> = match after.strip_prefix('{') {
                Some(group) => group.split('}').next().unwrap().split(',').collect(),
                None => vec![after],
            };
            for name in names {
                let ident: String =
                    name.trim().chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                if !ident.is_empty() {
                    found.push((number + 1, ident));
                }
            }
        }
    }
    found
}

/// Every upward or same-layer import in `sources`, as messages; panics on a module missing
/// from the layer list or a path it cannot place.
fn violations(sources: &Sources) -> Vec<String> {
    let lib_rs = &sources.iter().find(|(path, _)| path == "lib.rs").expect("lib.rs").1;
    let layers = layers(lib_rs);
    assert!(!layers.is_empty(), "lib.rs lists no layers");
    let reexports = reexports(lib_rs);
    let mut macros = BTreeMap::new();
    for (path, code) in sources {
        for part in code.split("macro_rules!").skip(1) {
            let name: String = part.trim().chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            macros.insert(name, module_of(path).to_owned());
        }
    }
    let mut found = Vec::new();
    for (path, code) in sources.iter().filter(|(path, _)| path != "lib.rs") {
        let module = module_of(path);
        let own = *layers
            .get(module)
            .unwrap_or_else(|| panic!("module `{module}` ({path}) is in no layer of lib.rs"));
        for (line, ident) in crate_paths(path, code) {
            let target = if layers.contains_key(&ident) {
                ident.clone()
            } else if let Some(module) = reexports.get(&ident).or_else(|| macros.get(&ident)) {
                module.clone()
            } else {
                panic!("{path}:{line}: cannot place `crate::{ident}` in a module")
            };
            let Some(&layer) = layers.get(&target) else { continue }; // an external crate (`sys`)
            if target != module && layer >= own {
                found.push(format!(
                    "{path}:{line}: `{module}` (layer {own}) uses `crate::{ident}` of `{target}` (layer {layer})"
                ));
            }
        }
    }
    found
}

#[test]
fn no_module_imports_one_of_its_own_layer_or_above() {
    let mut sources = Sources::new();
    // Relative to the package folder, where `cargo test` and the bundle runner start tests.
    read_sources(Path::new("src"), "", &mut sources);
    let found = violations(&sources);
    assert!(found.is_empty(), "imports against the layering of lib.rs:\n{}", found.join("\n"));
}

fn fake_crate(files: &[(&str, &str)]) -> Sources {
    let lib = "//! # Layers\n//! 1. `error` — errors.\n//! 2. `stream`, `device` — streams.\n//! 3. `graph` — graphs.\n\
               mod error;\npub use error::{CudaError, Result};\npub use graph::{\n    Graph,\n    GraphExec,\n};\n";
    let mut sources = vec![("lib.rs".to_owned(), lib.to_owned())];
    sources.extend(files.iter().map(|(path, code)| (path.to_string(), code.to_string())));
    sources
}

#[test]
fn the_check_finds_upward_and_same_layer_imports_however_written() {
    let sources = fake_crate(&[
        ("error.rs", "use crate::graph::Graph;\n// use crate::stream::Stream; (a comment)\n"),
        ("stream.rs", "use crate::{Result, GraphExec};\nfn f() { crate::device::get(); }\n"),
        ("device.rs", "use crate::error::CudaError;\n#[cfg(test)]\nmod tests {\n    use super::*;\n}\n"),
        ("graph/mod.rs", "use crate::error::Result;\nuse super::stream::Stream;\n"),
        ("graph/exec.rs", "use super::Graph;\nuse crate::CudaError;\n"),
    ]);
    let found = violations(&sources);
    let summary: Vec<&str> = found.iter().map(|v| v.split(": ").next().unwrap()).collect();
    assert_eq!(summary, ["error.rs:1", "stream.rs:1", "stream.rs:2"], "{found:#?}");
    assert!(found[1].contains("`crate::GraphExec` of `graph` (layer 3)"), "{}", found[1]);
    assert!(found[2].contains("`stream` (layer 2) uses `crate::device`"), "{}", found[2]);
}

#[test]
#[should_panic(expected = "module `host_fn` (host_fn.rs) is in no layer of lib.rs")]
fn a_module_missing_from_the_list_is_refused() {
    violations(&fake_crate(&[("host_fn.rs", "use crate::error::Result;\n")]));
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
    let mut sources = Sources::new();
    read_sources(Path::new("src"), "", &mut sources);
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
