//! The contract every chapter program keeps, so that its `main`, the chapter runner (`ch12`)
//! and its tests drive it the same way.

use std::fmt::Debug;
use std::process::ExitCode;

use crate::{Book, CommonArgs, ExampleError, Report};

/// One chapter program: its options, how to run it, the figure the chapter table shows, and
/// the workload of the chapter's own listing.
///
/// An example crate implements it on a unit struct (by convention `Program`); its binary's
/// `main` then calls [`main_with_flags`](crate::main_with_flags) (which drives [`main_with`]),
/// `ch12` runs it through [`ChapterProgram::run`] and shows
/// [`ChapterProgram::headline`] (for the port's workload and for [`ChapterProgram::book`]'s),
/// and its unit tests check its option rules with [`assert_options_checked`].
///
/// ```
/// use chapter_common::{Book, ChapterProgram, ExampleError, OptionCheck, Preset, Report};
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
///     fn book() -> Book<Options> {
///         let listing = Options { size: 1 << 16, ..Options::default() };
///         Book::Preset {
///             preset: Preset { quick: Options { runs: 2, ..listing.clone() }, options: listing },
///             note: "demo.cu: 64 Ki elements (the port: 1 Mi)",
///         }
///     }
/// }
///
/// let report = Demo::run(&Demo::quick_options()).unwrap();
/// assert_eq!(Demo::headline(&report), "1024 elements");
/// assert_eq!(Demo::book_options(false).map(|o| o.size), Some(1 << 16));
/// chapter_common::assert_options_checked::<Demo>(&[("size", Options { size: 0, ..Demo::quick_options() })]);
/// ```
pub trait ChapterProgram {
    /// The crate's (and binary's) name: what `ch12` lists and error messages start with.
    const NAME: &'static str;

    /// What to run. `Default` is the chapter's scale, for figures.
    type Options: Clone + Debug + Default;

    /// Small sizes and few runs: a quick correctness pass (tests, `--quick`), not for figures.
    fn quick_options() -> Self::Options;

    /// The quick pass cut to what compute-sanitizer finishes in minutes: what `ch12 --quick`
    /// runs when [`under_sanitizer`](crate::under_sanitizer) says a tool is watching, and what
    /// the program's own test runs there. The quick options unless the program says otherwise
    /// (a program whose device-side launches or spin-waits the tool makes slow by orders of
    /// magnitude); the checks are the same, on fewer or smaller cases.
    fn sanitizer_options() -> Self::Options {
        Self::quick_options()
    }

    /// Sets the timed runs and the seed of the random inputs (the flags every program takes).
    fn set_runs_and_seed(options: &mut Self::Options, runs: usize, seed: u64);

    /// Refuses options that cannot run, before any CUDA call, with [`ExampleError::Options`].
    fn validate(options: &Self::Options) -> Result<(), ExampleError>;

    /// Runs the program on device 0. A wrong result is not an error but a failed check in the
    /// report; errors are refused options, CUDA failures, or a check it could not go on without.
    fn run(options: &Self::Options) -> Result<Report, ExampleError>;

    /// The one-line summary of a report for the chapter table.
    fn headline(report: &Report) -> String;

    /// The chapter's own listing: whether the default runs its workload, options that do, or
    /// why there is none to run (see [`Book`]). Its options must pass
    /// [`ChapterProgram::validate`] ([`assert_options_checked`] checks them).
    fn book() -> Book<Self::Options>;

    /// The options `--book` runs (quick: the small form), or `None` when the chapter has no
    /// workload of its own that the port can run.
    fn book_options(quick: bool) -> Option<Self::Options> {
        Self::book()
            .options_or(|quick| if quick { Self::quick_options() } else { Self::Options::default() }, quick)
    }
}

/// The body of a program's `main`: the options at chapter scale (or quick; with `--book` the
/// chapter listing's workload, see [`ChapterProgram::book`]), the common flags, then the
/// program's own flags through `set`; runs it and prints the report (text, or JSON with
/// `--json`). The exit status fails when a check fails or the program returns an error
/// (printed as `NAME: error`); `--book` for a program without a workload of the chapter's
/// prints why and exits with 2.
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
/// #     fn book() -> chapter_common::Book<u32> { chapter_common::Book::NoListing { note: "" } }
/// # }
/// let size: Option<u32> = Some(4096); // from the program's own flags
/// std::process::exit(match chapter_common::main_with::<Demo>(&CommonArgs::default(), |options| {
///     *options = size.unwrap_or(*options);
/// }) { code if code == std::process::ExitCode::SUCCESS => 0, _ => 1 });
/// ```
pub fn main_with<P: ChapterProgram>(common: &CommonArgs, set: impl FnOnce(&mut P::Options)) -> ExitCode {
    let mut options = if !common.book {
        if common.quick {
            P::quick_options()
        } else {
            P::Options::default()
        }
    } else if let Some(options) = P::book_options(common.quick) {
        options
    } else {
        let book = P::book();
        eprintln!("{}: --book: nothing to run ({}): {}", P::NAME, book.kind(), book.note());
        return ExitCode::from(2);
    };
    P::set_runs_and_seed(&mut options, common.runs, common.seed);
    set(&mut options);
    match P::run(&options) {
        Ok(mut report) => {
            if common.book {
                report.note(format!("--book: the chapter listing's workload: {}", P::book().note()));
            }
            report.finish(common.json)
        }
        Err(err) => {
            eprintln!("{}: {err}", P::NAME);
            ExitCode::FAILURE
        }
    }
}

/// For a program's unit tests: its default and quick options, and those of its chapter
/// workload ([`ChapterProgram::book`], full and quick), pass [`ChapterProgram::validate`], zero
/// timed runs (set through [`ChapterProgram::set_runs_and_seed`]) is refused as `runs`, and
/// each `(option, options)` of `bad` is refused with [`ExampleError::Options`] naming that
/// option. Panics otherwise.
pub fn assert_options_checked<P: ChapterProgram>(bad: &[(&str, P::Options)]) {
    let book = [P::book_options(false), P::book_options(true)].into_iter().flatten();
    for options in [P::Options::default(), P::quick_options()].into_iter().chain(book) {
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
