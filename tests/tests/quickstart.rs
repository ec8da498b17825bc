//! The quick start on cuda-graph's front page (`cuda-graph/README.md`, "Quick start") is the
//! crate `tests/quickstart`, so the two cannot drift: each file the README shows is that file
//! byte for byte, the crate has no file the README does not show, its `Cargo.toml` adds only
//! what stands in for crates.io, and the one setup step is cuda-build's pip command.
//! `scripts/ci-quickstart` builds a copy of the crate outside the checkout after running that
//! step; when the quick start changes, change the crate the same way (or the README).

use std::path::{Path, PathBuf};

/// The package folder, where `cargo test` and `.gpu/run` start tests.
const PACKAGE: &str = ".";

/// The heading of the quick start in cuda-graph's README; the section ends at the next `## `.
const HEADING: &str = "## Quick start";

/// The line in the crate's `Cargo.toml` after which it differs from the README's.
const TOML_TAIL: &str = "# The quick start on cuda-graph's front page";

/// A fenced code block of the quick start, with the file it shows: the first `` `name` `` of
/// the paragraph above it, when that paragraph starts with one.
#[derive(Debug)]
struct Block {
    file: Option<String>,
    language: String,
    text: String,
}

fn quick_start(readme: &str) -> Vec<Block> {
    let start =
        readme.find(&format!("\n{HEADING}\n")).expect("cuda-graph/README.md has a `## Quick start` section");
    let section = &readme[start + 1..];
    let end = section[HEADING.len()..].find("\n## ").map_or(section.len(), |end| end + HEADING.len());
    let mut blocks = Vec::new();
    // The first line of the paragraph above, and whether the line before was blank.
    let (mut above, mut blank): (Option<&str>, bool) = (None, true);
    let mut lines = section[..end].lines();
    while let Some(line) = lines.next() {
        let Some(language) = line.strip_prefix("```") else {
            if line.trim().is_empty() {
                blank = true;
            } else if std::mem::replace(&mut blank, false) {
                above = Some(line);
            }
            continue;
        };
        let mut text = String::new();
        for line in lines.by_ref().take_while(|line| *line != "```") {
            text.push_str(line);
            text.push('\n');
        }
        let file = above.and_then(|line| line.strip_prefix('`')).and_then(|rest| rest.split('`').next());
        blocks.push(Block { file: file.map(str::to_string), language: language.to_string(), text });
        (above, blank) = (None, true);
    }
    blocks
}

/// The crate's files, relative to its folder, without what builds and setups leave there.
fn crate_files(dir: &Path, relative: &Path, files: &mut Vec<String>) {
    for entry in std::fs::read_dir(dir).unwrap_or_else(|err| panic!("{}: {err}", dir.display())) {
        let entry = entry.expect("a folder entry");
        let name = entry.file_name().into_string().expect("UTF-8 file names");
        if ["target", ".cuda", "Cargo.lock"].contains(&name.as_str()) {
            continue;
        }
        let path: PathBuf = relative.join(&name);
        if entry.file_type().expect("a file type").is_dir() {
            crate_files(&entry.path(), &path, files);
        } else {
            files.push(path.to_str().expect("UTF-8 paths").replace('\\', "/"));
        }
    }
}

fn readme() -> String {
    std::fs::read_to_string(Path::new(PACKAGE).join("../cuda-graph/README.md")).expect("cuda-graph/README.md")
}

fn crate_dir() -> PathBuf {
    Path::new(PACKAGE).join("quickstart")
}

#[test]
fn the_quick_start_shows_every_file_of_the_crate_as_it_is() {
    let blocks = quick_start(&readme());
    let mut shown: Vec<String> = blocks.iter().filter_map(|block| block.file.clone()).collect();
    let mut files = Vec::new();
    crate_files(&crate_dir(), Path::new(""), &mut files);
    shown.sort();
    files.sort();
    assert_eq!(shown, files, "the files the quick start shows, and tests/quickstart's");
    for block in &blocks {
        let Some(file) = &block.file else { continue };
        let on_disk = std::fs::read_to_string(crate_dir().join(file)).expect("the crate's file");
        if file == "Cargo.toml" {
            continue; // below
        }
        assert_eq!(
            block.text, on_disk,
            "cuda-graph/README.md's quick start shows {file} differently from tests/quickstart/{file}"
        );
    }
}

#[test]
fn the_crates_manifest_is_the_quick_starts_and_only_stands_in_for_crates_io() {
    let blocks = quick_start(&readme());
    let shown =
        blocks.iter().find(|block| block.file.as_deref() == Some("Cargo.toml")).expect("a Cargo.toml");
    assert_eq!(shown.language, "toml");
    let manifest =
        std::fs::read_to_string(crate_dir().join("Cargo.toml")).expect("tests/quickstart/Cargo.toml");
    let tail = manifest.strip_prefix(&shown.text).unwrap_or_else(|| {
        panic!("tests/quickstart/Cargo.toml must start with the quick start's Cargo.toml:\n{}", shown.text)
    });
    let tail = tail.strip_prefix('\n').unwrap_or(tail);
    assert!(
        tail.starts_with(TOML_TAIL),
        "after the quick start's text, Cargo.toml goes on with `{TOML_TAIL}`"
    );
    // What follows: the crate's own workspace, and the checkout's crates for each one the
    // quick start depends on (scripts/ci-quickstart rewrites these paths).
    let mut expected = vec!["[workspace]".to_string(), "[patch.crates-io]".to_string()];
    let mut table = "";
    for line in shown.text.lines() {
        if line.starts_with('[') {
            table = line;
        } else if let (true, Some((name, _))) = (table.ends_with("dependencies]"), line.split_once(" = ")) {
            expected.push(format!("{name} = {{ path = \"../../{name}\" }}"));
        }
    }
    let rest: Vec<&str> = tail.lines().filter(|line| !line.is_empty() && !line.starts_with('#')).collect();
    assert_eq!(rest, expected, "tests/quickstart/Cargo.toml after the quick start's text");
}

#[test]
fn the_one_setup_step_is_cuda_builds_pip_command() {
    let blocks = quick_start(&readme());
    let steps: Vec<&Block> = blocks.iter().filter(|block| block.language == "sh").collect();
    assert_eq!(steps.len(), 1, "one setup step (`sh` block), which scripts/ci-quickstart runs");
    assert_eq!(steps[0].text, format!("{}\n", cuda_build::pip_install_command(".cuda")));
    for block in &blocks {
        assert!(
            block.file.is_some() || block.language == "sh",
            "a code block of the quick start names no file of tests/quickstart: {block:?}"
        );
    }
}

#[test]
fn the_top_readme_links_to_the_quick_start() {
    let top = std::fs::read_to_string(Path::new(PACKAGE).join("../README.md")).expect("README.md");
    assert!(
        top.contains("(cuda-graph/README.md#quick-start)"),
        "README.md links to cuda-graph's quick start"
    );
}

#[test]
fn the_top_readme_stays_a_front_page() {
    // What it is, the two commands, the quick start, one table of each kind of figure: the
    // analysis lives in bench/README.md, RELIABILITY.md and the examples' READMEs.
    let top = std::fs::read_to_string(Path::new(PACKAGE).join("../README.md")).expect("README.md");
    let lines = top.lines().count();
    assert!(lines < 150, "README.md has {lines} lines; move analysis to the pages it links");
}

#[test]
fn the_typo_the_quick_start_quotes_is_on_the_line_it_names() {
    // scripts/ci-quickstart makes this typo (`+ y[i];` becomes `+ valu;`) and checks nvcc's
    // message, at the line of the kernel file where it made it.
    let kernel = std::fs::read_to_string(crate_dir().join("kernels/app.cu")).expect("kernels/app.cu");
    let line =
        kernel.lines().position(|line| line.contains("+ y[i];")).expect("a `+ y[i];` in kernels/app.cu") + 1;
    let readme = readme().replace('\n', " ");
    let quoted = format!("`kernels/app.cu({line}): error: identifier \"valu\" is undefined`");
    assert!(readme.contains(&quoted), "cuda-graph/README.md's quick start quotes {quoted}");
}
