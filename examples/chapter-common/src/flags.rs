//! A program's command line, read straight into its options: each program's `Options` derives
//! `clap::Args`, so an option, its flag and its help live in one place, and `main` is one call.

use std::ffi::OsString;
use std::process::ExitCode;

use clap::parser::ValueSource;
use clap::{Args, Command, FromArgMatches};

use crate::{main_with, ChapterProgram, CommonArgs, ExampleError};

/// The `main` of a program whose `Options` are its flags: `#[derive(clap::Args)]` on `Options`,
/// `#[arg(long)]` on each field a flag sets, `#[arg(skip)]` on the others (`runs` and `seed`
/// among them: they come from [`CommonArgs`]).
///
/// The options start at chapter scale (or quick, with `--quick`); a flag given on the command
/// line replaces its field and nothing else, so `--quick --iters 5` keeps the quick sizes.
/// Then [`main_with`] runs the program and prints its report. `about` is the first line of
/// `--help`.
///
/// ```no_run
/// use chapter_common::{ChapterProgram, ExampleError, Report};
///
/// #[derive(Debug, Clone, Default, clap::Args)]
/// struct Options {
///     /// Elements (default 4096).
///     #[arg(long, value_name = "N")]
///     size: u32,
///     #[arg(skip)]
///     runs: usize,
/// }
/// struct Demo;
/// impl ChapterProgram for Demo {
///     const NAME: &'static str = "demo";
///     type Options = Options;
///     fn quick_options() -> Options { Options { size: 64, runs: 1 } }
///     fn set_runs_and_seed(options: &mut Options, runs: usize, _: u64) { options.runs = runs; }
///     fn validate(_: &Options) -> Result<(), ExampleError> { Ok(()) }
///     fn run(_: &Options) -> Result<Report, ExampleError> { Ok(Report::new("demo")) }
///     fn headline(_: &Report) -> String { String::new() }
///     fn book() -> chapter_common::Book<Options> { chapter_common::Book::NoListing { note: "" } }
/// }
///
/// fn main() -> std::process::ExitCode {
///     chapter_common::main_with_flags::<Demo>("A demo of one flag.")
/// }
/// ```
pub fn main_with_flags<P>(about: &'static str) -> ExitCode
where
    P: ChapterProgram,
    P::Options: Args,
{
    main_with_extra_flags::<P, NoExtraFlags>(about, |NoExtraFlags, _| {})
}

/// [`main_with_flags`] for a program with flags that are not fields of its options (a switch
/// that edits several, say): `X` declares them (`#[derive(clap::Args)]`), and `apply` changes
/// the options by them, after the options' own flags.
///
/// ```no_run
/// # use chapter_common::{ChapterProgram, ExampleError, Report};
/// # #[derive(Debug, Clone, Default, clap::Args)]
/// # struct Options { #[arg(skip)] sweep: Vec<u32> }
/// # struct Demo;
/// # impl ChapterProgram for Demo {
/// #     const NAME: &'static str = "demo";
/// #     type Options = Options;
/// #     fn quick_options() -> Options { Options::default() }
/// #     fn set_runs_and_seed(_: &mut Options, _: usize, _: u64) {}
/// #     fn validate(_: &Options) -> Result<(), ExampleError> { Ok(()) }
/// #     fn run(_: &Options) -> Result<Report, ExampleError> { Ok(Report::new("demo")) }
/// #     fn headline(_: &Report) -> String { String::new() }
/// #     fn book() -> chapter_common::Book<Options> { chapter_common::Book::NoListing { note: "" } }
/// # }
/// #[derive(Debug, clap::Args)]
/// struct Switches {
///     /// Time no sweep.
///     #[arg(long)]
///     no_sweep: bool,
/// }
///
/// fn main() -> std::process::ExitCode {
///     chapter_common::main_with_extra_flags::<Demo, Switches>("A demo.", |switches, options| {
///         if switches.no_sweep {
///             options.sweep.clear();
///         }
///     })
/// }
/// ```
pub fn main_with_extra_flags<P, X>(about: &'static str, apply: impl FnOnce(X, &mut P::Options)) -> ExitCode
where
    P: ChapterProgram,
    P::Options: Args,
    X: Args + FromArgMatches,
{
    main_from_args::<P, X>(about, std::env::args_os(), apply).unwrap_or_else(|err| err.exit())
}

/// No flags beyond the options' own (what [`main_with_flags`] passes for `X`).
#[derive(Debug, Clone, Copy, clap::Args)]
pub struct NoExtraFlags;

/// The command line: the program's options, its extra flags, then the common flags.
fn command<P, X>(about: &'static str) -> Command
where
    P: ChapterProgram,
    P::Options: Args,
    X: Args,
{
    let command = Command::new(P::NAME).version(env!("CARGO_PKG_VERSION"));
    // For update: no option flag is required, each one given replaces its field.
    let command = CommonArgs::augment_args(X::augment_args(P::Options::augment_args_for_update(command)));
    // Last: each struct's own doc comment, when it has one, would be the about otherwise.
    command.about(about).long_about(None)
}

/// [`main_with_extra_flags`] over the arguments `args` (the program's name first); a refused
/// command line (and `--help`, `--version`) is the `Err` clap prints.
fn main_from_args<P, X>(
    about: &'static str, args: impl IntoIterator<Item = impl Into<OsString> + Clone>,
    apply: impl FnOnce(X, &mut P::Options),
) -> Result<ExitCode, clap::Error>
where
    P: ChapterProgram,
    P::Options: Args,
    X: Args + FromArgMatches,
{
    let matches = command::<P, X>(about).try_get_matches_from(args)?;
    let common = CommonArgs::from_arg_matches(&matches)?;
    let extra = X::from_arg_matches(&matches)?;
    Ok(main_with::<P>(&common, |options| {
        // The matches come from the command these options built, so their types agree; a
        // refusal here is clap's to print, before the program runs.
        if let Err(err) = options.update_from_arg_matches(&matches) {
            err.exit()
        }
        apply(extra, options)
    }))
}

/// For a program's unit tests: each of `bad`, one of its options' own flags with a value
/// (`--size=0`), set on top of the quick options, is refused by [`ChapterProgram::validate`]
/// with an [`ExampleError::Options`] naming the field that flag sets. So the refusal is
/// checked through the command line a user types. Panics otherwise.
///
/// ```
/// # use chapter_common::{ChapterProgram, ExampleError, OptionCheck, Report};
/// #[derive(Debug, Clone, Default, clap::Args)]
/// struct Options {
///     /// Elements.
///     #[arg(long = "size")]
///     elements: u32,
/// }
/// struct Demo;
/// impl ChapterProgram for Demo {
///     const NAME: &'static str = "demo";
///     type Options = Options;
///     fn quick_options() -> Options { Options { elements: 64 } }
///     fn set_runs_and_seed(_: &mut Options, _: usize, _: u64) {}
///     fn validate(o: &Options) -> Result<(), ExampleError> {
///         OptionCheck::new("demo").within("elements", o.elements, 1..=1024).done()
///     }
///     fn run(_: &Options) -> Result<Report, ExampleError> { Ok(Report::new("demo")) }
///     fn headline(_: &Report) -> String { String::new() }
///     fn book() -> chapter_common::Book<Options> { chapter_common::Book::NoListing { note: "" } }
/// }
/// chapter_common::assert_flags_refused::<Demo>(&["--size=0", "--size=1025"]);
/// ```
#[track_caller]
pub fn assert_flags_refused<P>(bad: &[&str])
where
    P: ChapterProgram,
    P::Options: Args,
{
    for flag in bad {
        let command = P::Options::augment_args_for_update(Command::new(P::NAME));
        let matches =
            command.try_get_matches_from([P::NAME, flag]).unwrap_or_else(|err| panic!("{flag}: {err}"));
        let mut given =
            matches.ids().filter(|id| matches.value_source(id.as_str()) == Some(ValueSource::CommandLine));
        let field = given.next().unwrap_or_else(|| panic!("{flag} sets no field")).as_str();
        let mut options = P::quick_options();
        if let Err(err) = options.update_from_arg_matches(&matches) {
            panic!("{flag}: {err}");
        }
        match P::validate(&options) {
            Err(ExampleError::Options { option, .. }) if option == field => {}
            other => panic!("{}: {flag}: want {field} refused, got {other:?}", P::NAME),
        }
    }
}

/// The value of `--NAME VALUE` or `--NAME=VALUE` among `args`, if given: for a flag that runs
/// instead of the program (a redraw from files, say), read before the program's own parsing.
///
/// ```
/// use std::ffi::OsString;
/// let args: Vec<OsString> = ["prog", "--chart", "out"].iter().map(OsString::from).collect();
/// assert_eq!(chapter_common::flag_value(&args, "--chart"), Some("out".into()));
/// let args: Vec<OsString> = ["prog", "--chart=dir"].iter().map(OsString::from).collect();
/// assert_eq!(chapter_common::flag_value(&args, "--chart"), Some("dir".into()));
/// assert_eq!(chapter_common::flag_value(&args, "--other"), None);
/// ```
pub fn flag_value(args: &[std::ffi::OsString], name: &str) -> Option<std::path::PathBuf> {
    args.iter().enumerate().find_map(|(index, arg)| {
        let arg = arg.to_str()?;
        match arg.strip_prefix(name) {
            Some("") => args.get(index + 1).map(std::path::PathBuf::from),
            Some(value) => value.strip_prefix('=').map(std::path::PathBuf::from),
            None => None,
        }
    })
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;

    use super::*;
    use crate::{ExampleError, Report};

    #[derive(Debug, Clone, PartialEq, clap::Args)]
    struct Options {
        /// Elements.
        #[arg(long = "size", value_name = "N")]
        elements: u32,
        /// Iterations.
        #[arg(long, value_name = "N")]
        iters: u32,
        /// Sizes also timed.
        #[arg(long, value_delimiter = ',')]
        sweep: Vec<u32>,
        /// Calibrated when `None`.
        #[arg(long)]
        rounds: Option<u32>,
        /// On unless `--no-control`.
        #[arg(long = "no-control", action = clap::ArgAction::SetFalse)]
        control: bool,
        #[arg(skip)]
        runs: usize,
        #[arg(skip)]
        seed: u64,
    }

    impl Default for Options {
        fn default() -> Options {
            Options {
                elements: 4096,
                iters: 100,
                sweep: vec![1, 2],
                rounds: None,
                control: true,
                runs: 5,
                seed: 0x5eed,
            }
        }
    }

    thread_local! {
        static RAN_WITH: RefCell<Option<Options>> = const { RefCell::new(None) };
    }

    struct Demo;

    impl ChapterProgram for Demo {
        const NAME: &'static str = "demo";
        type Options = Options;
        fn quick_options() -> Options {
            Options { elements: 64, iters: 2, runs: 1, ..Options::default() }
        }
        fn set_runs_and_seed(options: &mut Options, runs: usize, seed: u64) {
            (options.runs, options.seed) = (runs, seed);
        }
        fn validate(options: &Options) -> Result<(), ExampleError> {
            crate::OptionCheck::new("demo").at_least("iters", options.iters, 1).done()
        }
        fn run(options: &Options) -> Result<Report, ExampleError> {
            RAN_WITH.with(|ran| *ran.borrow_mut() = Some(options.clone()));
            let mut report = Report::new("demo");
            report.check("ran", true, "");
            Ok(report)
        }
        fn headline(_: &Report) -> String {
            String::new()
        }
        fn book() -> crate::Book<Options> {
            crate::Book::SameAsPort { note: "the demo's default" }
        }
    }

    #[derive(Debug, clap::Args)]
    struct Switches {
        #[arg(long)]
        no_sweep: bool,
    }

    /// The options `Demo` ran with for `args`.
    fn ran_with(args: &[&str]) -> Options {
        let args = std::iter::once("demo").chain(args.iter().copied());
        let code = main_from_args::<Demo, Switches>("demo", args, |switches, options| {
            if switches.no_sweep {
                options.sweep.clear();
            }
        })
        .unwrap_or_else(|err| panic!("{err}"));
        assert_eq!(code, ExitCode::SUCCESS);
        RAN_WITH.with(|ran| ran.borrow_mut().take()).expect("the program ran")
    }

    #[test]
    fn no_flag_leaves_the_chapter_scale_and_quick_the_quick_one() {
        assert_eq!(ran_with(&[]), Options::default());
        // The common flags still set runs and seed.
        let quick = ran_with(&["--quick", "--runs", "3", "--seed", "9"]);
        assert_eq!(quick, Options { runs: 3, seed: 9, ..Demo::quick_options() });
    }

    #[test]
    fn a_given_flag_replaces_its_field_only() {
        let options = ran_with(&["--quick", "--iters", "7", "--sweep", "3,4", "--rounds", "9"]);
        assert_eq!(
            options,
            Options {
                iters: 7,
                sweep: vec![3, 4],
                rounds: Some(9),
                seed: 0x5eed,
                runs: 5,
                ..Demo::quick_options()
            }
        );
        assert_eq!(ran_with(&["--size", "12"]).elements, 12);
    }

    #[test]
    fn a_set_false_flag_sets_its_field_whether_given_or_not() {
        // Its implicit default (true) counts as given, so a preset cannot turn it off.
        assert!(ran_with(&["--quick"]).control);
        assert!(!ran_with(&["--quick", "--no-control"]).control);
    }

    #[test]
    fn a_refused_flag_names_the_field_it_sets() {
        assert_flags_refused::<Demo>(&["--iters=0"]);
        let accepted = std::panic::catch_unwind(|| assert_flags_refused::<Demo>(&["--iters=3"]));
        assert!(accepted.is_err(), "a flag the program accepts does not pass as refused");
        let unknown = std::panic::catch_unwind(|| assert_flags_refused::<Demo>(&["--runs=0"]));
        assert!(unknown.is_err(), "a common flag is not one of the options' own");
    }

    #[test]
    fn extra_flags_apply_after_the_options_own() {
        assert!(ran_with(&["--sweep", "3", "--no-sweep"]).sweep.is_empty());
    }

    #[test]
    fn a_bad_value_or_a_skipped_field_is_refused_by_clap() {
        for args in
            [&["demo", "--iters", "x"][..], &["demo", "--seed-of-nothing"], &["demo", "--elements", "1"]]
        {
            let err = main_from_args::<Demo, Switches>("demo", args.iter().copied(), |_, _| {}).unwrap_err();
            assert_eq!(err.exit_code(), 2, "{args:?}: {err}");
        }
        let help = command::<Demo, Switches>("about the demo").render_help().to_string();
        for part in ["about the demo", "--size <N>", "--no-sweep", "--quick", "--json"] {
            assert!(help.contains(part), "{part} missing from:\n{help}");
        }
    }
}
