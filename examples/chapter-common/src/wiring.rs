//! The wiring every example crate shares: its `Program`, a [`ChapterProgram`](crate::ChapterProgram)
//! that forwards to the crate's own items.

/// Declares `pub struct Program`, the crate's [`ChapterProgram`](crate::ChapterProgram), named
/// `$name`, forwarding to what every example crate defines at its root: `Options` (with
/// `quick()`, `validate()` and the `runs` and `seed` fields), `run`, `headline` and `book`.
/// `chapter_program!("name", sanitizer: crate::Options::for_sanitizer)` names the options
/// [`ChapterProgram::sanitizer_options`](crate::ChapterProgram::sanitizer_options) returns
/// (by default the quick ones). An example whose program needs more than this forwarding
/// implements the trait by hand.
///
/// ```
/// use chapter_common::{Book, ExampleError, OptionCheck, Report};
///
/// #[derive(Debug, Clone, Default)]
/// pub struct Options { pub size: u32, pub runs: usize, pub seed: u64 }
///
/// impl Options {
///     pub fn quick() -> Options { Options { size: 16, runs: 1, seed: 1 } }
///     pub fn validate(&self) -> Result<(), ExampleError> {
///         OptionCheck::new("demo").at_least("runs", self.runs, 1).done()
///     }
/// }
/// pub fn run(options: &Options) -> Result<Report, ExampleError> {
///     options.validate()?;
///     let mut report = Report::new("demo");
///     report.figure("size", f64::from(options.size), "elements");
///     Ok(report)
/// }
/// pub fn headline(report: &Report) -> String {
///     format!("{} elements", report.figure_or_nan("size"))
/// }
/// pub fn book() -> Book<Options> {
///     Book::NoListing { note: "the chapter gives no sizes" }
/// }
///
/// chapter_common::chapter_program!("demo");
///
/// fn main() {
///     use chapter_common::ChapterProgram;
///     let report = Program::run(&Program::quick_options()).unwrap();
///     assert_eq!((Program::NAME, Program::headline(&report).as_str()), ("demo", "16 elements"));
/// }
/// ```
// `crate::` is meant: it names the calling example crate's items, which the macro forwards to.
#[allow(clippy::crate_in_macro_def)]
#[macro_export]
macro_rules! chapter_program {
    ($name:expr) => {
        $crate::chapter_program!($name, sanitizer: crate::Options::quick);
    };
    ($name:expr, sanitizer: $sanitizer:path) => {
        /// The program (see the crate docs) as a
        /// [`ChapterProgram`](chapter_common::ChapterProgram): what its `main`, the chapter
        /// runner and the tests drive.
        pub struct Program;

        impl $crate::ChapterProgram for Program {
            const NAME: &'static str = $name;
            type Options = crate::Options;

            fn quick_options() -> crate::Options {
                crate::Options::quick()
            }

            fn sanitizer_options() -> crate::Options {
                $sanitizer()
            }

            fn set_runs_and_seed(options: &mut crate::Options, runs: usize, seed: u64) {
                (options.runs, options.seed) = (runs, seed);
            }

            fn validate(options: &crate::Options) -> Result<(), $crate::ExampleError> {
                options.validate()
            }

            fn run(options: &crate::Options) -> Result<$crate::Report, $crate::ExampleError> {
                crate::run(options)
            }

            fn headline(report: &$crate::Report) -> String {
                crate::headline(report)
            }

            fn book() -> $crate::Book<crate::Options> {
                crate::book()
            }
        }
    };
}
