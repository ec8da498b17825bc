//! Running nvcc (and the programs built with it) with its output captured: a failure becomes
//! a [`BuildError::Nvcc`](crate::BuildError::Nvcc) holding nvcc's and the host compiler's own
//! diagnostics (`file(line): error: ...`), the step and the command line; the output of a
//! step that succeeds (warnings, remarks) is printed as `cargo:warning=` lines, which Cargo
//! shows for the packages of the user's own workspace.

use std::fmt;
use std::path::Path;
use std::process::Command;

/// A step of a kernel or image build that failed: nvcc, the host compiler it runs, nvlink,
/// the archiver, or the signature printer built from the source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NvccError {
    /// What was being done, like `compiling /pkg/kernels/fill.cu`.
    pub step: String,
    /// How the command ended (`exit status: 2`), or why it could not start.
    pub status: String,
    /// Everything the command wrote (stderr, then stdout), as written: nvcc's
    /// `file(line): error: message` lines, the host compiler's `file:line:col: error: ...`.
    pub output: String,
    /// The command line, quoted as a shell would take it.
    pub command: String,
    /// What to do, when the output shows a mistake cuda-build knows.
    pub hint: Option<String>,
}

impl fmt::Display for NvccError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} failed ({})", self.step, self.status)?;
        let output = self.output.trim_end();
        if output.is_empty() {
            writeln!(f, ", printing nothing.")?;
        } else {
            writeln!(f, ":\n\n{output}\n")?;
        }
        if let Some(hint) = &self.hint {
            writeln!(f, "hint: {hint}")?;
        }
        write!(f, "command: {}", self.command)
    }
}

/// Runs `command` for `step`. On success, returns what it wrote (stderr, then stdout) after
/// printing each non-empty line as a cargo warning; on failure, the error holding all of it.
/// `source` is the `.cu` file the step compiles, for the hint.
pub(crate) fn run(command: &mut Command, step: &str, source: Option<&Path>) -> Result<String, NvccError> {
    let (stdout, mut text) = execute(command, step, source)?;
    text.push_str(&stdout);
    forward_as_warnings(&text);
    Ok(text)
}

/// Runs a program whose standard output is its result (the signature printer): returns that
/// output; what it writes to stderr becomes cargo warnings, or part of the error.
pub(crate) fn run_for_output(command: &mut Command, step: &str) -> Result<String, NvccError> {
    let (stdout, stderr) = execute(command, step, None)?;
    forward_as_warnings(&stderr);
    Ok(stdout)
}

/// Runs `command`: its stdout and stderr on success, else the error holding both.
fn execute(command: &mut Command, step: &str, source: Option<&Path>) -> Result<(String, String), NvccError> {
    let output = command.output().map_err(|err| NvccError {
        step: step.to_string(),
        status: format!("could not start it: {err}"),
        output: String::new(),
        command: command_line(command),
        hint: None,
    })?;
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = without_repeats(&String::from_utf8_lossy(&output.stderr));
    if output.status.success() {
        return Ok((stdout, stderr));
    }
    let text = stderr + &stdout;
    Err(NvccError {
        step: step.to_string(),
        status: output.status.to_string(),
        hint: hint(&text, source),
        output: text,
        command: command_line(command),
    })
}

/// `text` with each block of lines (blocks end at an empty line) kept only the first time:
/// nvcc's front end runs once per architecture and repeats each diagnostic.
fn without_repeats(text: &str) -> String {
    let mut seen: Vec<&str> = Vec::new();
    let mut kept = String::with_capacity(text.len());
    for block in text.split_inclusive("\n\n") {
        if !seen.contains(&block) {
            seen.push(block);
            kept.push_str(block);
        }
    }
    kept
}

/// Prints each non-empty line of `text` as a `cargo:warning=` line.
pub(crate) fn forward_as_warnings(text: &str) {
    for line in warning_lines(text) {
        println!("cargo:warning={line}");
    }
}

/// The lines [`forward_as_warnings`] prints: every line with text, without a trailing `\r`.
fn warning_lines(text: &str) -> impl Iterator<Item = &str> {
    text.lines().map(|line| line.trim_end_matches('\r')).filter(|line| !line.trim().is_empty())
}

/// The program and its arguments, each quoted.
pub(crate) fn command_line(command: &Command) -> String {
    let mut line = format!("{:?}", command.get_program());
    for arg in command.get_args() {
        line.push(' ');
        line.push_str(&format!("{arg:?}"));
    }
    line
}

/// What to do about a failure whose output shows a mistake cuda-build knows; `source` is the
/// `.cu` file being compiled, when there is one.
pub(crate) fn hint(output: &str, source: Option<&Path>) -> Option<String> {
    let file = source.map(|path| path.display().to_string()).unwrap_or_else(|| "the .cu file".to_string());
    let missing_header = |header: &str| {
        output.contains(&format!("\"{header}\": No such file"))
            || output.contains(&format!("{header}: No such file"))
            || output.contains(&format!("cannot open source file \"{header}\""))
    };
    if missing_header("device_launch.cuh") {
        return Some(
            "device_launch.cuh comes with the device-launch crate: add `device-launch` to \
             [dependencies] in Cargo.toml and `.include_from_dependency(\"DEVICE_LAUNCH\")` to \
             the KernelBuild in build.rs, which then puts the header on the include path."
                .to_string(),
        );
    }
    let namespace_unknown = output.contains("incomplete type \"cuda_graph::")
        || output.contains("name followed by \"::\" must be a class or namespace name")
        || output.contains("is not a class or namespace")
        || output.contains("namespace \"cuda_graph\" has no member");
    if namespace_unknown && output.contains("cuda_graph::pdl") {
        return Some(format!(
            "`cuda_graph::pdl` is declared by a header cuda-build ships: add \
             `#include <cuda_graph_pdl.cuh>` at the top of {file} (cuda-build puts it on the include path)."
        ));
    }
    if namespace_unknown && output.contains("cuda_graph::") {
        return Some(format!(
            "`cuda_graph::slice<T>` (the C++ side of `DeviceSlice<T>`) is declared by a header \
             cuda-build ships: add `#include <cuda_graph.cuh>` at the top of {file} (cuda-build \
             puts it on the include path)."
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const TYPO: &str = "/pkg/kernels/fill.cu(4): error: identifier \"valu\" is undefined\n      out[i] = valu;\n               ^\n\n1 error detected in the compilation of \"/out/fill.cu\".\n";

    #[test]
    fn the_error_holds_the_step_the_diagnostics_and_the_command() {
        let err = NvccError {
            step: "compiling /pkg/kernels/fill.cu".into(),
            status: "exit status: 2".into(),
            output: TYPO.into(),
            command: "\"nvcc\" \"-c\"".into(),
            hint: None,
        };
        let text = err.to_string();
        assert!(text.starts_with("compiling /pkg/kernels/fill.cu failed (exit status: 2):\n\n"), "{text}");
        assert!(
            text.contains("/pkg/kernels/fill.cu(4): error: identifier \"valu\" is undefined\n"),
            "{text}"
        );
        assert!(text.ends_with("command: \"nvcc\" \"-c\""), "{text}");
    }

    #[test]
    fn a_failing_command_is_an_error_with_its_output() {
        let mut command = Command::new("sh");
        command.args(["-c", "echo 'x.cu(1): error: bad' >&2; echo on-stdout; exit 3"]);
        let Err(err) = run(&mut command, "compiling x.cu", None) else {
            panic!("sh exited 3");
        };
        assert_eq!(err.output, "x.cu(1): error: bad\non-stdout\n");
        assert!(err.status.contains('3'), "{}", err.status);
        assert!(err.command.starts_with("\"sh\" \"-c\""), "{}", err.command);
        let mut missing = Command::new("/nonexistent/nvcc");
        let Err(err) = run(&mut missing, "compiling x.cu", None) else {
            panic!("no such program");
        };
        assert!(err.status.starts_with("could not start it"), "{}", err.status);
    }

    #[test]
    fn a_succeeding_command_returns_its_output_for_the_warnings() {
        let mut command = Command::new("sh");
        command.args(["-c", "echo 'x.cu(2): warning #177-D: unused' >&2"]);
        assert_eq!(run(&mut command, "compiling x.cu", None).unwrap(), "x.cu(2): warning #177-D: unused\n");
        let lines: Vec<&str> = warning_lines("a\r\n\n  \n  ^\n").collect();
        assert_eq!(lines, ["a", "  ^"]);
    }

    #[test]
    fn a_diagnostic_repeated_for_each_architecture_is_kept_once() {
        let once = "k.cu(3): warning #177-D: unused\n  int x;\n      ^\n\nRemark: suppress\n\n";
        assert_eq!(without_repeats(&once.repeat(2)), once);
        assert_eq!(without_repeats("a\n\nb\n\na\n"), "a\n\nb\n\na\n");
    }

    #[test]
    fn hints_name_the_missing_include() {
        let slice = "k.cu(1): error: name followed by \"::\" must be a class or namespace name\n  \
                     extern \"C\" __attribute__((global)) void k(cuda_graph::slice<float> s) { }\n";
        let text = hint(slice, Some(Path::new("/pkg/kernels/k.cu"))).unwrap();
        assert!(text.contains("#include <cuda_graph.cuh>") && text.contains("/pkg/kernels/k.cu"), "{text}");
        let pdl = "k.cu(3): error: name followed by \"::\" must be a class or namespace name\n  \
                   cuda_graph::pdl::wait_upstream();\n";
        assert!(hint_of(pdl).contains("#include <cuda_graph_pdl.cuh>"));
        // What the wrapper, which declares `cuda_graph::slice` without defining it, makes of it.
        let incomplete = "k.cu(1): error: incomplete type \"cuda_graph::slice<float>\" is not allowed\n";
        assert!(hint_of(incomplete).contains("#include <cuda_graph.cuh>"));
        let devrt = "k.cu:1:10: fatal error: device_launch.cuh: No such file or directory\n";
        assert!(hint_of(devrt).contains(".include_from_dependency(\"DEVICE_LAUNCH\")"));
        assert_eq!(hint(TYPO, None), None);
    }

    fn hint_of(output: &str) -> String {
        hint(output, None).unwrap_or_default()
    }
}
