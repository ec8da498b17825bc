//! The contract every chapter program keeps, so that its `main`, the chapter runner (`ch12`)
//! and its tests drive it the same way.

use std::fmt::Debug;
use std::process::ExitCode;

use crate::{CommonArgs, ExampleError, Report};

/// One chapter program: its options, how to run it, and the figure the chapter table shows.
///
/// An example crate implements it on a unit struct (by convention `Program`); its binary's
/// `main` then calls [`main_with`], `ch12` runs it through [`ChapterProgram::run`] and shows
/// [`ChapterProgram::headline`], and its unit tests check its option rules with
/// [`assert_options_checked`].
///
/// ```
/// use chapter_common::{ChapterProgram, ExampleError, OptionCheck, Report};
///
/// #[derive(Debug, Clone)]
/// struct Options { size: u32, runs: usize, seed: u64 }
///
/// impl Default for Options {
///     fn default() -> Options { Options { size: 1 << 20, runs: 5, seed: 1 } }
/// }
///
/// struct Demo;
///
/// impl ChapterProgram for Demo {
///     const NAME: &'static str = "demo";
///     type Options = Options;
///     fn quick_options() -> Options { Options { size: 1024, runs: 2, ..Options::default() } }
///     fn set_runs_and_seed(options: &mut Options, runs: usize, seed: u64) {
///         (options.runs, options.seed) = (runs, seed);
///     }
///     fn validate(options: &Options) -> Result<(), ExampleError> {
///         OptionCheck::new("demo").within("size", options.size, 1..=1 << 26).at_least("runs", options.runs, 1).done()
///     }
///     fn run(options: &Options) -> Result<Report, ExampleError> {
///         Self::validate(options)?;
///         let mut report = Report::new("demo");
///         report.figure("size", f64::from(options.size), "elements");
///         Ok(report)
///     }
///     fn headline(report: &Report) -> String {
///         format!("{} elements", report.figure_value("size").unwrap_or(f64::NAN))
///     }
/// }
///
/// let report = Demo::run(&Demo::quick_options()).unwrap();
/// assert_eq!(Demo::headline(&report), "1024 elements");
/// chapter_common::assert_options_checked::<Demo>(&[("size", Options { size: 0, ..Demo::quick_options() })]);
/// ```
pub trait ChapterProgram {
    /// The crate's (and binary's) name: what `ch12` lists and error messages start with.
    const NAME: &'static str;

    /// What to run. `Default` is the chapter's scale, for figures.
    type Options: Clone + Debug + Default;

    /// Small sizes and few runs: a quick correctness pass (tests, `--quick`), not for figures.
    fn quick_options() -> Self::Options;

    /// Sets the timed runs and the seed of the random inputs (the flags every program takes).
    fn set_runs_and_seed(options: &mut Self::Options, runs: usize, seed: u64);

    /// Refuses options that cannot run, before any CUDA call, with [`ExampleError::Options`].
    fn validate(options: &Self::Options) -> Result<(), ExampleError>;

    /// Runs the program on device 0. A wrong result is not an error but a failed check in the
    /// report; errors are refused options, CUDA failures, or a check it could not go on without.
    fn run(options: &Self::Options) -> Result<Report, ExampleError>;

    /// The one-line summary of a report for the chapter table.
    fn headline(report: &Report) -> String;
}

/// The body of a program's `main`: the options at chapter scale (or quick), the common flags,
/// then the program's own flags through `set`; runs it and prints the report (text, or JSON
/// with `--json`). The exit status fails when a check fails or the program returns an error
/// (printed as `NAME: error`).
///
/// ```no_run
/// # use chapter_common::{ChapterProgram, CommonArgs, ExampleError, Report};
/// # struct Demo;
/// # impl ChapterProgram for Demo {
/// #     const NAME: &'static str = "demo";
/// #     type Options = u32;
/// #     fn quick_options() -> u32 { 1 }
/// #     fn set_runs_and_seed(_: &mut u32, _: usize, _: u64) {}
/// #     fn validate(_: &u32) -> Result<(), ExampleError> { Ok(()) }
/// #     fn run(_: &u32) -> Result<Report, ExampleError> { Ok(Report::new("demo")) }
/// #     fn headline(_: &Report) -> String { String::new() }
/// # }
/// let size: Option<u32> = Some(4096); // from the program's own flags
/// std::process::exit(match chapter_common::main_with::<Demo>(&CommonArgs::default(), |options| {
///     *options = size.unwrap_or(*options);
/// }) { code if code == std::process::ExitCode::SUCCESS => 0, _ => 1 });
/// ```
pub fn main_with<P: ChapterProgram>(common: &CommonArgs, set: impl FnOnce(&mut P::Options)) -> ExitCode {
    let mut options = if common.quick { P::quick_options() } else { P::Options::default() };
    P::set_runs_and_seed(&mut options, common.runs, common.seed);
    set(&mut options);
    match P::run(&options) {
        Ok(report) => report.finish(common.json),
        Err(err) => {
            eprintln!("{}: {err}", P::NAME);
            ExitCode::FAILURE
        }
    }
}

/// For a program's unit tests: its default and quick options pass [`ChapterProgram::validate`],
/// zero timed runs (set through [`ChapterProgram::set_runs_and_seed`]) is refused as `runs`,
/// and each `(option, options)` of `bad` is refused with [`ExampleError::Options`] naming that
/// option. Panics otherwise.
pub fn assert_options_checked<P: ChapterProgram>(bad: &[(&str, P::Options)]) {
    for options in [P::Options::default(), P::quick_options()] {
        if let Err(err) = P::validate(&options) {
            panic!("{}: {options:?} refused: {err}", P::NAME);
        }
    }
    let mut no_runs = P::quick_options();
    P::set_runs_and_seed(&mut no_runs, 0, 1);
    for (option, options) in std::iter::once(("runs", &no_runs)).chain(bad.iter().map(|(o, opts)| (*o, opts)))
    {
        match P::validate(options) {
            Err(ExampleError::Options { option: named, .. }) if named == option => {}
            other => panic!("{}: {options:?}: want {option} refused, got {other:?}", P::NAME),
        }
    }
}
