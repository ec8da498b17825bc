//! The workspace's module layering, checked without a GPU.
//!
//! - cuda-graph: its crate docs (`src/lib.rs`, "# Layers") list the top-level modules by layer,
//!   lowest first, and every `crate::` (or `super::` that reaches the crate root) path in a
//!   module must name a module of a lower layer, or its own module. Paths through `lib.rs`'s
//!   re-exports (`crate::CudaError`) count as paths to the module they re-export.
//! - Every crate of the workspace (each library and each binary root): no import circle
//!   between its top-level modules, read the same way.

use std::collections::{BTreeMap, BTreeSet};
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
    // Relative to this package's folder, where `cargo test` and the bundle runner start tests.
    read_sources(Path::new("../cuda-graph/src"), "", &mut sources);
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

/// The crate roots of every workspace member (`src/lib.rs`, `src/main.rs`), relative to this
/// package's folder.
fn crate_roots() -> Vec<(String, String)> {
    let mut roots = Vec::new();
    for member in members() {
        for root in ["lib.rs", "main.rs"] {
            if Path::new(&format!("../{member}/src/{root}")).exists() {
                roots.push((format!("../{member}/src"), root.to_owned()));
            }
        }
    }
    roots
}

/// The workspace's members, relative to its root, as Cargo counts them: the root
/// `Cargo.toml`'s `members`, and every path dependency of a member that lies inside the
/// workspace (the chapter programs are members as `examples/registry`'s dependencies).
fn members() -> Vec<String> {
    let manifest = std::fs::read_to_string("../Cargo.toml").expect("the workspace's Cargo.toml");
    let listed = manifest.split("members = [").nth(1).expect("members").split(']').next().unwrap();
    let mut members: Vec<String> = listed
        .lines()
        .map(|line| line.split('#').next().unwrap_or("").trim().trim_end_matches(',').trim_matches('"'))
        .filter(|m| !m.is_empty())
        .map(str::to_owned)
        .collect();
    let mut next = 0;
    while next < members.len() {
        let manifest =
            std::fs::read_to_string(format!("../{}/Cargo.toml", members[next])).unwrap_or_default();
        for dependency in manifest.split("path = \"").skip(1).filter_map(|rest| rest.split('"').next()) {
            let member = normalized(&format!("{}/{dependency}", members[next]));
            let inside = !member.starts_with("..");
            if inside && !members.contains(&member) && Path::new(&format!("../{member}/Cargo.toml")).exists()
            {
                members.push(member);
            }
        }
        next += 1;
    }
    members
}

/// `a/b/../c` as `a/c`; a path that leaves the root starts with `..`.
fn normalized(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/').filter(|part| !part.is_empty() && *part != ".") {
        match (part, parts.last()) {
            ("..", Some(last)) if *last != ".." => {
                parts.pop();
            }
            _ => parts.push(part),
        }
    }
    parts.join("/")
}

#[test]
fn the_chapter_programs_are_members_through_the_registry() {
    let members = members();
    for member in ["examples/registry", "examples/atomic_work_queue", "examples/beyond/generation_loop"] {
        assert!(members.iter().any(|m| m == member), "{member}: {members:?}");
    }
    assert_eq!(normalized("examples/registry/../atomic_work_queue"), "examples/atomic_work_queue");
    assert_eq!(normalized("tests/../../elsewhere"), "../elsewhere");
}

/// The modules a crate root declares (`mod name;`, `pub mod name;`, `pub(crate) mod name;`),
/// `#[cfg(test)]` ones included.
fn declared_modules(root: &str) -> BTreeSet<String> {
    root.lines()
        .filter(|line| !line.trim_start().starts_with("//"))
        .filter_map(|line| {
            let line = line.trim();
            let rest = line
                .strip_prefix("pub(crate) mod ")
                .or(line.strip_prefix("pub mod "))
                .or(line.strip_prefix("mod "))?;
            rest.strip_suffix(';').map(|name| name.trim().to_owned())
        })
        .collect()
}

/// Which top-level modules each top-level module of the crate rooted at `dir/root` names
/// through the crate root.
fn module_graph(dir: &str, root: &str) -> BTreeMap<String, BTreeSet<String>> {
    let mut all = Sources::new();
    read_sources(Path::new(dir), "", &mut all);
    let root_text = &all.iter().find(|(path, _)| path == root).expect("crate root").1;
    let modules = declared_modules(root_text);
    let reexports = reexports(root_text);
    let mut macros = BTreeMap::new();
    for (path, code) in &all {
        for part in code.split("macro_rules!").skip(1) {
            let name: String = part.trim().chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            macros.insert(name, module_of(path).to_owned());
        }
    }
    let mut graph: BTreeMap<String, BTreeSet<String>> =
        modules.iter().map(|m| (m.clone(), BTreeSet::new())).collect();
    for (path, code) in all.iter().filter(|(path, _)| modules.contains(module_of(path))) {
        let module = module_of(path).to_owned();
        for (_, ident) in crate_paths(path, code) {
            let target = if modules.contains(&ident) {
                Some(ident)
            } else {
                reexports.get(&ident).or_else(|| macros.get(&ident)).cloned()
            };
            if let Some(target) = target.filter(|t| *t != module && modules.contains(t)) {
                graph.get_mut(&module).unwrap().insert(target);
            }
        }
    }
    graph
}

/// The import circles of `graph`: each a set of modules that reach one another, as names.
fn circles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    let reaches = |from: &str| {
        let mut seen = BTreeSet::new();
        let mut todo: Vec<&str> = graph[from].iter().map(String::as_str).collect();
        while let Some(next) = todo.pop() {
            if seen.insert(next.to_owned()) {
                todo.extend(graph[next].iter().map(String::as_str));
            }
        }
        seen
    };
    let reach: BTreeMap<&str, BTreeSet<String>> = graph.keys().map(|m| (m.as_str(), reaches(m))).collect();
    let mut found: Vec<Vec<String>> = Vec::new();
    for module in graph.keys() {
        if !reach[module.as_str()].contains(module) {
            continue;
        }
        let circle: Vec<String> = graph
            .keys()
            .filter(|other| reach[module.as_str()].contains(*other) && reach[other.as_str()].contains(module))
            .cloned()
            .collect();
        if !found.contains(&circle) {
            found.push(circle);
        }
    }
    found
}

#[test]
fn no_crate_of_the_workspace_has_an_import_circle() {
    let roots = crate_roots();
    assert!(roots.len() > 20, "found {} crate roots", roots.len());
    let mut found = Vec::new();
    for (dir, root) in &roots {
        for circle in circles(&module_graph(dir, root)) {
            found.push(format!("{dir}/{root}: {}", circle.join(" -> ")));
        }
    }
    assert!(
        found.is_empty(),
        "modules that import one another (directly or through others):\n{}",
        found.join("\n")
    );
}

#[test]
fn a_circle_through_a_reexport_is_found() {
    let graph: BTreeMap<String, BTreeSet<String>> = [
        ("error", &["exec"][..]),
        ("exec", &["validate"][..]),
        ("validate", &["error"][..]),
        ("limits", &[][..]),
    ]
    .into_iter()
    .map(|(m, to)| (m.to_owned(), to.iter().map(|t| t.to_string()).collect()))
    .collect();
    assert_eq!(circles(&graph), [vec!["error".to_owned(), "exec".to_owned(), "validate".to_owned()]]);
    let code = "use crate::{Fail, workspace};\nfn f() { super::super::exec::run(); }\n";
    assert_eq!(
        crate_paths("a/b.rs", code).into_iter().map(|(_, i)| i).collect::<Vec<_>>(),
        ["Fail", "workspace", "exec"]
    );
}
