//! Kernel signatures: for each `extern "C" __global__` kernel a `.cu` file defines, a host
//! function `<kernel>__cuda_graph_signature()` that returns the kernel's C++ parameter types
//! in canonical spelling (see `cuda_graph_signature.cuh`), which `cuda_graph::kernels!`
//! declares and compares with its Rust declaration.
//!
//! Each `kernels/<name>.cu` is compiled through a generated wrapper in `OUT_DIR`: the shipped
//! header, then the original included by absolute path (so its own `#include "..."` lines
//! resolve as before), then one `CUDA_GRAPH_SIGNATURE(kernel)` line per kernel found by
//! [`kernel_definitions`] in the source as the compiler sees it: preprocessed by `nvcc -E`
//! with the build's include folders and flags, and only the lines of the `.cu` file itself
//! ([`main_file_text`]), so kernels under `#if 0` (or an `#ifdef` that is off) are skipped and
//! kernels spelled through macros are found.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::build_error::BuildError;

/// The header that renders the type lists, written next to the wrappers.
pub const SIGNATURE_HEADER: &str = include_str!("cuda_graph_signature.cuh");

/// The header kernels may include (`#include "cuda_graph.cuh"`): `cuda_graph::slice<T>`, the
/// C++ side of `cuda_graph::DeviceSlice<T>`. It is on the include path of every build.
pub const SLICE_HEADER: &str = include_str!("cuda_graph.cuh");

/// The slice header's file name.
pub const SLICE_HEADER_NAME: &str = "cuda_graph.cuh";

/// The header kernels include for programmatic dependent launch
/// (`#include "cuda_graph_pdl.cuh"`): `cuda_graph::pdl::wait_upstream()` and
/// `cuda_graph::pdl::launch_dependents()`, the device half of programmatic edges and of
/// launches with programmatic stream serialization, with what a kernel may touch before the
/// wait. It is on the include path of every build.
pub const PDL_HEADER: &str = include_str!("cuda_graph_pdl.cuh");

/// The programmatic-dependent-launch header's file name.
pub const PDL_HEADER_NAME: &str = "cuda_graph_pdl.cuh";

/// The header's file name (include it as `#include "cuda_graph_signature.cuh"`).
pub const SIGNATURE_HEADER_NAME: &str = "cuda_graph_signature.cuh";

/// The suffix of the signature function of each kernel: `<kernel>__cuda_graph_signature`.
pub const SIGNATURE_SUFFIX: &str = "__cuda_graph_signature";

/// One token of CUDA C++ source, as far as finding kernels needs.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Ident(String),
    /// A string literal's contents (escapes left as written).
    Str(String),
    Punct(char),
}

/// Splits `source` into identifiers, string literals and single punctuation characters,
/// dropping comments, character literals, numbers and preprocessor lines.
fn tokens(source: &str) -> Vec<Token> {
    let chars: Vec<char> = source.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let mut line_start = true;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '\n' {
            line_start = true;
            i += 1;
        } else if c.is_whitespace() {
            i += 1;
        } else if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            i += 2;
            while i < chars.len() && !(chars[i] == '*' && chars.get(i + 1) == Some(&'/')) {
                i += 1;
            }
            i += 2;
        } else if c == '#' && line_start {
            // A preprocessor line, with its backslash continuations.
            while i < chars.len() && chars[i] != '\n' {
                if chars[i] == '\\' && chars.get(i + 1) == Some(&'\n') {
                    i += 1;
                }
                i += 1;
            }
        } else if c == '"' || c == '\'' {
            let start = i + 1;
            i += 1;
            while i < chars.len() && chars[i] != c {
                if chars[i] == '\\' {
                    i += 1;
                }
                i += 1;
            }
            if c == '"' {
                out.push(Token::Str(chars[start..i.min(chars.len())].iter().collect()));
            }
            i += 1;
            line_start = false;
        } else if c.is_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            out.push(Token::Ident(chars[start..i].iter().collect()));
            line_start = false;
        } else if c.is_ascii_digit() {
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '.' || chars[i] == '\'') {
                i += 1;
            }
            line_start = false;
        } else {
            out.push(Token::Punct(c));
            i += 1;
            line_start = false;
        }
    }
    out
}

fn is_ident(token: Option<&Token>, name: &str) -> bool {
    matches!(token, Some(Token::Ident(ident)) if ident == name)
}

fn is_punct(token: Option<&Token>, c: char) -> bool {
    token == Some(&Token::Punct(c))
}

fn is_extern_c(tokens: &[Token], at: usize) -> bool {
    is_ident(tokens.get(at), "extern") && matches!(tokens.get(at + 1), Some(Token::Str(s)) if s == "C")
}

/// The index just past the parentheses that open at `open` (or the end of the tokens).
fn skip_parens(tokens: &[Token], open: usize) -> usize {
    let mut depth = 0usize;
    let mut i = open;
    while i < tokens.len() {
        match tokens[i] {
            Token::Punct('(') => depth += 1,
            Token::Punct(')') => {
                depth -= 1;
                if depth == 0 {
                    return i + 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    tokens.len()
}

/// Specifiers written as `name(...)` between `__global__` and the kernel's name.
const ATTRIBUTE_CALLS: &[&str] =
    &["__launch_bounds__", "__attribute__", "__cluster_dims__", "__maxnreg__", "__declspec", "alignas"];

/// The names of the `extern "C" __global__` kernels that `source` defines (with a body, not
/// only declared), in order: `extern "C" __global__ void name(...) {`, with specifiers such as
/// `__launch_bounds__(256)` before the name, and kernels inside `extern "C" { ... }` blocks.
/// Comments and preprocessor lines are skipped; templates are never `extern "C"` kernels.
/// The text is taken as it stands: the builds pass it preprocessed ([`main_file_text`] of
/// `nvcc -E`), where `__global__` reads `__attribute__((global))` (also accepted here), `#if`
/// has been decided and macros expanded.
///
/// ```
/// let source = "extern \"C\" __global__ void scale(float* p, unsigned n) { }";
/// assert_eq!(cuda_build::kernel_definitions(source), ["scale"]);
/// ```
pub fn kernel_definitions(source: &str) -> Vec<String> {
    let tokens = tokens(source);
    let mut kernels = Vec::new();
    // One entry per open brace: whether it opened an `extern "C" {` block.
    let mut braces: Vec<bool> = Vec::new();
    let mut statement_start = 0;
    let mut i = 0;
    while i < tokens.len() {
        match &tokens[i] {
            Token::Punct('{') => {
                braces.push(i >= 2 && is_extern_c(&tokens, i - 2));
                statement_start = i + 1;
            }
            Token::Punct('}') => {
                braces.pop();
                statement_start = i + 1;
            }
            Token::Punct(';') => statement_start = i + 1,
            Token::Ident(ident) if ident == "__global__" || is_global_attribute(&tokens, i) => {
                let statement = &tokens[statement_start..i];
                // Past `__global__`, or past `__attribute__((global))` (what `nvcc -E` writes).
                let marker_end = if ident == "__global__" { i + 1 } else { i + 6 };
                let in_extern_block = braces.iter().any(|&extern_c| extern_c);
                let extern_c = in_extern_block || (0..statement.len()).any(|at| is_extern_c(statement, at));
                let template = statement.iter().any(|t| matches!(t, Token::Ident(s) if s == "template"));
                if let (true, false, Some((name, after))) =
                    (extern_c, template, kernel_name(&tokens, marker_end))
                {
                    if is_punct(tokens.get(after), '{') || body_follows(&tokens, after) {
                        kernels.push(name);
                    }
                }
            }
            _ => {}
        }
        i += 1;
    }
    kernels
}

/// Whether `__attribute__((global))`, the preprocessed `__global__`, starts at `at`.
fn is_global_attribute(tokens: &[Token], at: usize) -> bool {
    is_ident(tokens.get(at), "__attribute__")
        && is_punct(tokens.get(at + 1), '(')
        && is_punct(tokens.get(at + 2), '(')
        && is_ident(tokens.get(at + 3), "global")
        && is_punct(tokens.get(at + 4), ')')
        && is_punct(tokens.get(at + 5), ')')
}

/// The kernel's name after `__global__` (at `from`), and the index past its parameter list.
fn kernel_name(tokens: &[Token], from: usize) -> Option<(String, usize)> {
    let mut i = from;
    while i < tokens.len() {
        match &tokens[i] {
            Token::Ident(ident) if is_punct(tokens.get(i + 1), '(') => {
                if ATTRIBUTE_CALLS.contains(&ident.as_str()) {
                    i = skip_parens(tokens, i + 1);
                    continue;
                }
                return Some((ident.clone(), skip_parens(tokens, i + 1)));
            }
            Token::Punct(';' | '{' | '}') => return None,
            _ => i += 1,
        }
    }
    None
}

/// Whether a body (`{`) comes before the next `;` from `at` (attributes may sit between).
fn body_follows(tokens: &[Token], at: usize) -> bool {
    for token in &tokens[at.min(tokens.len())..] {
        match token {
            Token::Punct('{') => return true,
            Token::Punct(';') => return false,
            _ => {}
        }
    }
    false
}

/// The wrapper translation unit for `original` (an absolute path) and its kernels.
pub fn wrapper_source(original: &Path, kernels: &[String]) -> String {
    let mut text = format!(
        "// Generated by cuda-build: {original} and the parameter-type signature of each of its\n\
         // `extern \"C\" __global__` kernels, for `cuda_graph::kernels!`. The header comes first:\n\
         // the source's own macros cannot reach the standard headers it includes, and a mistake\n\
         // in the source leaves no cascade of errors in them.\n\
         #include \"{SIGNATURE_HEADER_NAME}\"\n\
         #include \"{original}\"\n\
         #ifndef __CUDA_ARCH__\n",
        original = original.display().to_string().replace('\\', "/"),
    );
    for kernel in kernels {
        text.push_str(&format!("CUDA_GRAPH_SIGNATURE({kernel})\n"));
    }
    text.push_str("#endif\n");
    text
}

/// The lines of preprocessed text (`nvcc -E`) that come from the main file, the one the
/// first line marker (`# 0 "file"`) names; lines of included files are left out (kept
/// as empty lines).
///
/// ```
/// let preprocessed = "# 0 \"k.cu\"\n# 1 \"inc.h\" 1\nint in_header;\n# 2 \"k.cu\" 2\nint in_main;\n";
/// assert_eq!(cuda_build::main_file_text(preprocessed).trim(), "int in_main;");
/// ```
pub fn main_file_text(preprocessed: &str) -> String {
    let mut main: Option<&str> = None;
    let mut in_main = true;
    let mut text = String::with_capacity(preprocessed.len() / 8);
    for line in preprocessed.lines() {
        if let Some(file) = line_marker_file(line) {
            let main = *main.get_or_insert(file);
            in_main = file == main;
        } else if in_main {
            text.push_str(line);
        }
        text.push('\n');
    }
    text
}

/// The file a line marker names: `# 12 "file" 1 3` (GCC, nvcc) or `#line 12 "file"`.
fn line_marker_file(line: &str) -> Option<&str> {
    let rest = line.strip_prefix('#')?.trim_start();
    let rest = rest.strip_prefix("line").unwrap_or(rest).trim_start();
    let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    if digits == 0 {
        return None;
    }
    let quoted = rest[digits..].trim_start().strip_prefix('"')?;
    let mut escaped = false;
    for (at, c) in quoted.char_indices() {
        match c {
            '\\' if !escaped => escaped = true,
            '"' if !escaped => return Some(&quoted[..at]),
            _ => escaped = false,
        }
    }
    None
}

/// The `extern "C"` kernels `source` defines, as the compiler sees them: `preprocess` (nvcc
/// with the build's include folders and flags) is run with `-E` on `source`, writing to
/// `output`, and [`kernel_definitions`] reads the lines of `source` itself.
pub(crate) fn kernels_of(
    mut preprocess: Command, source: &Path, output: &Path,
) -> Result<Vec<String>, BuildError> {
    preprocess.arg("-E").arg("-o").arg(output).arg(source);
    let step = format!("preprocessing {} (to find its kernels)", source.display());
    crate::nvcc::run(&mut preprocess, &step, Some(source))?;
    let text = std::fs::read(output).map_err(|err| BuildError::Io(output.to_path_buf(), err))?;
    Ok(kernel_definitions(&main_file_text(&String::from_utf8_lossy(&text))))
}

/// Writes the shipped headers into `dir`, which the builds put on the include path.
pub(crate) fn write_headers(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    write_if_changed(&dir.join(SIGNATURE_HEADER_NAME), SIGNATURE_HEADER)?;
    write_if_changed(&dir.join(SLICE_HEADER_NAME), SLICE_HEADER)?;
    write_if_changed(&dir.join(PDL_HEADER_NAME), PDL_HEADER)
}

/// Writes the wrapper of `source` (an absolute path) and its `kernels` into `dir`; returns
/// its path.
pub(crate) fn write_wrapper(dir: &Path, source: &Path, kernels: &[String]) -> std::io::Result<PathBuf> {
    let name = source.file_name().map(PathBuf::from).unwrap_or_else(|| PathBuf::from("kernels.cu"));
    let wrapper = dir.join(name);
    write_if_changed(&wrapper, &wrapper_source(source, kernels))?;
    Ok(wrapper)
}

/// Writes `text` unless the file already holds it (so an unchanged wrapper keeps its mtime).
fn write_if_changed(path: &Path, text: &str) -> std::io::Result<()> {
    if std::fs::read_to_string(path).is_ok_and(|old| old == text) {
        return Ok(());
    }
    std::fs::write(path, text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_plain_kernels_in_order() {
        let source = r#"
            #include <cstdint>
            extern "C" __global__ void fill(uint32_t* out, uint32_t n) { out[0] = n; }
            extern "C" __global__ void noop() {}
        "#;
        assert_eq!(kernel_definitions(source), ["fill", "noop"]);
    }

    #[test]
    fn finds_launch_bounds_and_extern_blocks() {
        let source = r#"
            extern "C" __global__ void __launch_bounds__(256, 2) bounded(float* p) { }
            extern "C" {
            __global__ void in_block(int x) { if (x) { return; } }
            __global__ __launch_bounds__(128) void also_in_block() { }
            }
            __global__ void after_block() { }
        "#;
        assert_eq!(kernel_definitions(source), ["bounded", "in_block", "also_in_block"]);
    }

    #[test]
    fn skips_comments_templates_declarations_and_cpp_kernels() {
        let source = r#"
            // extern "C" __global__ void commented(int x) {}
            /* extern "C" __global__ void block_commented() {} */
            #define KERNEL extern "C" __global__ void in_macro() {}
            template <typename T> __global__ void generic(T* p) {}
            __global__ void cpp_linkage(int* p) {}
            extern "C" __global__ void declared_only(int* p);
            extern "C" __device__ void device_helper(int* p) {}
            const char* text = "extern \"C\" __global__ void in_string() {}";
            extern "C" __global__ void real(const char* c) { (void)'{'; }
        "#;
        assert_eq!(kernel_definitions(source), ["real"]);
    }

    #[test]
    fn finds_kernels_as_nvcc_preprocesses_them() {
        // What `nvcc -E` makes of `__global__`, `__launch_bounds__(256)` and a kernel macro.
        let source = r#"
            extern "C" __attribute__((global)) void __attribute__((launch_bounds(256))) bounded(float* p) { }
            extern "C" __attribute__((global)) void from_macro(unsigned* o) { o[0] = 2; }
            extern "C" {
            __attribute__((global)) void in_block(int x) {}
            }
            extern "C" __attribute__((global)) void declared(int x);
            template <class T> __attribute__((global)) void generic(T* p) {}
            extern "C" __attribute__((device)) void helper() {}
        "#;
        assert_eq!(kernel_definitions(source), ["bounded", "from_macro", "in_block"]);
    }

    #[test]
    fn only_the_main_file_of_preprocessed_text_is_kept() {
        let preprocessed = concat!(
            "# 0 \"/pkg/kernels/k.cu\"\n",
            "# 0 \"<built-in>\"\n",
            "extern \"C\" __attribute__((global)) void builtin() {}\n",
            "# 1 \"/toolkit/include/cuda_runtime.h\" 1 3\n",
            "extern \"C\" __attribute__((global)) void in_header() {}\n",
            "# 3 \"/pkg/kernels/k.cu\" 2\n",
            "extern \"C\" __attribute__((global)) void mine() {}\n",
            "#line 9 \"/pkg/kernels/other.h\"\n",
            "extern \"C\" __attribute__((global)) void other() {}\n",
            "# 12 \"/pkg/kernels/k.cu\"\n",
            "extern \"C\" __attribute__((global)) void also_mine() {}\n",
        );
        assert_eq!(kernel_definitions(&main_file_text(preprocessed)), ["mine", "also_mine"]);
        assert_eq!(line_marker_file("# 7 \"a \\\"b\\\".cu\" 2"), Some("a \\\"b\\\".cu"));
        assert_eq!(line_marker_file("#pragma once"), None);
        assert_eq!(line_marker_file("#define X 1"), None);
    }

    #[test]
    fn a_wrapper_includes_the_header_then_the_original_then_one_line_per_kernel() {
        let text = wrapper_source(Path::new("/pkg/kernels/fill.cu"), &["fill".into(), "noop".into()]);
        let lines: Vec<&str> = text.lines().filter(|line| !line.starts_with("//")).collect();
        assert_eq!(
            lines,
            [
                "#include \"cuda_graph_signature.cuh\"",
                "#include \"/pkg/kernels/fill.cu\"",
                "#ifndef __CUDA_ARCH__",
                "CUDA_GRAPH_SIGNATURE(fill)",
                "CUDA_GRAPH_SIGNATURE(noop)",
                "#endif",
            ]
        );
    }

    #[test]
    fn the_shipped_header_defines_the_macro() {
        assert!(SIGNATURE_HEADER.contains("#define CUDA_GRAPH_SIGNATURE(name)"));
        assert!(SIGNATURE_HEADER.contains(SIGNATURE_SUFFIX));
        assert!(SLICE_HEADER.contains("struct slice"));
        assert!(PDL_HEADER.contains("cudaGridDependencySynchronize()"));
        assert!(PDL_HEADER.contains("cudaTriggerProgrammaticLaunchCompletion()"));
    }
}
