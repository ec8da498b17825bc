//! Shared pieces of the workspace-level tests: the smoke kernels' host stubs and a checker
//! for raw CUDA results. The tests themselves are in `tests/tests/`.

use std::ffi::{c_void, CStr};

/// The workspace README's examples, compiled as doc tests (`no_run`: they need a GPU).
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct RootReadme;

use cudart_graph_sys as sys;

/// Panics with the CUDA error's name and message and the call that failed, unless `status`
/// is success. For tests on the raw bindings only: the safe crates return `Result`s.
#[track_caller]
pub fn check(status: sys::cudaError_t, call: &str) {
    if status != sys::cudaError::cudaSuccess {
        panic!("{call} failed: {}", describe(status));
    }
}

/// `cudaErrorInvalidValue (1): invalid argument`, from the runtime's own tables.
pub fn describe(status: sys::cudaError_t) -> String {
    // SAFETY: both functions accept any error code and return pointers to static,
    // NUL-terminated strings owned by the runtime (or null, handled below).
    let (name, message) = unsafe { (sys::cudaGetErrorName(status), sys::cudaGetErrorString(status)) };
    let text = |p: *const std::ffi::c_char| {
        if p.is_null() {
            "?".to_string()
        } else {
            // SAFETY: non-null pointers from the two calls above are static C strings.
            unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
        }
    };
    format!("{} ({}): {}", text(name), status.0, text(message))
}

/// The address of a kernel's host stub, which the runtime maps to the device function.
pub fn stub(kernel: unsafe extern "C" fn()) -> *const c_void {
    kernel as *const c_void
}

/// The figure `name` of a chapter program's report, failing the test with the whole report
/// when the program did not report it.
#[track_caller]
pub fn figure(report: &chapter_common::Report, name: &str) -> f64 {
    report.figure_value(name).unwrap_or_else(|| panic!("figure {name} missing: {}", report.to_text()))
}

/// The report of a chapter program's run that must pass: fails the test with the error, or
/// with the whole report unless every check held (its JSON verdict `PASS` as well).
#[track_caller]
pub fn passed(
    outcome: Result<chapter_common::Report, chapter_common::ExampleError>,
) -> chapter_common::Report {
    let report = outcome.unwrap_or_else(|err| panic!("{err}"));
    assert!(report.passed(), "{}", report.to_text());
    assert_eq!(report.to_json()["verdict"], "PASS");
    report
}

/// Each figure `names` of `report` is there, finite and above zero.
///
/// ```
/// let mut report = chapter_common::Report::new("p");
/// report.figure("speedup", 1.5, "x");
/// tests::assert_positive_figures(&report, &["speedup"]);
/// ```
#[track_caller]
pub fn assert_positive_figures(report: &chapter_common::Report, names: &[impl AsRef<str>]) {
    for name in names.iter().map(AsRef::as_ref) {
        let value = figure(report, name);
        assert!(value.is_finite() && value > 0.0, "{name} = {value}");
    }
}

/// Each check `names` of `report` was made and held.
///
/// ```
/// let mut report = chapter_common::Report::new("p");
/// report.check("graph equals the CPU model", true, "4096 values");
/// tests::assert_checks_held(&report, &["graph equals the CPU model"]);
/// ```
#[track_caller]
pub fn assert_checks_held(report: &chapter_common::Report, names: &[impl AsRef<str>]) {
    let json = report.to_json();
    let checks = json["checks"].as_array().expect("checks");
    for name in names.iter().map(AsRef::as_ref) {
        assert!(checks.iter().any(|c| c["name"] == name && c["held"] == true), "{name}: {checks:?}");
    }
}

/// `outcome` is the refusal of `option` (an [`ExampleError::Options`](chapter_common::ExampleError::Options),
/// not a panic or a CUDA error) and its message holds `text`.
///
/// ```
/// let refused = Err(chapter_common::ExampleError::options("p", "kernels", "kernels must be 2..=8, not 1"));
/// tests::assert_refused(refused, "kernels", "kernels must be");
/// ```
#[track_caller]
pub fn assert_refused(
    outcome: Result<chapter_common::Report, chapter_common::ExampleError>, option: &str, text: &str,
) {
    let err = outcome.expect_err("refused");
    assert!(
        matches!(&err, chapter_common::ExampleError::Options { option: named, .. } if *named == option),
        "not the options variant: {err:?}"
    );
    assert!(err.to_string().contains(text), "{err}");
}

/// A chapter program's run that passed: its options, its report, the report as JSON, and
/// `figure(name)`, the report's figure `name` (see [`figure`]). What a program's test starts
/// from: `let tests::Run { options, report, json, figure } = tests::quick_run::<Program>();`.
pub struct Run<O> {
    /// The options it ran.
    pub options: O,
    /// Its report (every check held).
    pub report: chapter_common::Report,
    /// The report as JSON ([`Report::to_json`](chapter_common::Report::to_json)).
    pub json: serde_json::Value,
    /// The report's figure of that name, failing the test when it is missing.
    pub figure: Box<dyn Fn(&str) -> f64>,
}

/// Runs program `P` on `options` and fails the test unless every check passes (see
/// [`passed`]); returns the run.
#[track_caller]
pub fn passing_run<P: chapter_common::ChapterProgram>(options: P::Options) -> Run<P::Options> {
    let report = passed(P::run(&options));
    let json = report.to_json();
    let figures = report.clone();
    Run { options, report, json, figure: Box::new(move |name| figure(&figures, name)) }
}

/// Program `P`'s quick run, which must pass: its quick options, or under compute-sanitizer its
/// [`sanitizer_options`](chapter_common::ChapterProgram::sanitizer_options) (what `ch12
/// --quick` runs there; the quick ones unless the program says otherwise).
#[track_caller]
pub fn quick_run<P: chapter_common::ChapterProgram>() -> Run<P::Options> {
    passing_run::<P>(if under_sanitizer() { P::sanitizer_options() } else { P::quick_options() })
}

/// Runs the quick form of program `P`'s chapter workload (`ChapterProgram::book`), fails the
/// test unless it has one and every check passes, and returns the run.
#[track_caller]
pub fn book_quick_run<P: chapter_common::ChapterProgram>() -> Run<P::Options> {
    let options = P::book_options(true).unwrap_or_else(|| panic!("{} has no --book workload", P::NAME));
    passing_run::<P>(options)
}

/// True when the tests run under compute-sanitizer: see [`gpu_test_support::under_sanitizer`].
///
/// ```
/// let iters = if tests::under_sanitizer() { 4 } else { 50 };
/// # let _ = iters;
/// ```
pub fn under_sanitizer() -> bool {
    gpu_test_support::under_sanitizer()
}

/// The value `smoke_fill_pattern` writes at index `i`.
pub fn smoke_pattern(i: u32, seed: u32) -> u32 {
    i.wrapping_mul(2_654_435_761) ^ seed
}

extern "C" {
    /// `smoke_fill_pattern(uint32_t* out, uint32_t n, uint32_t seed)`.
    pub fn smoke_fill_pattern();
    /// `smoke_cdp_parent(uint32_t* data, uint32_t n, unsigned long long* sum, int* status)`.
    pub fn smoke_cdp_parent();
    /// `smoke_scale_add_index(uint32_t* data, uint32_t n, uint32_t scale)`.
    pub fn smoke_scale_add_index();
}
