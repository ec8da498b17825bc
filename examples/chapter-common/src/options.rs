//! Checking a program's options before any CUDA call: rules tried in order, the first that
//! fails becomes an [`ExampleError::Options`] naming its option.

use std::fmt::Display;
use std::ops::RangeInclusive;

use crate::ExampleError;

/// The options of one program, checked rule by rule; the first refusal is kept.
///
/// ```
/// use chapter_common::{ExampleError, OptionCheck};
///
/// let (size, runs, threads) = (0_u32, 3_usize, 96_u32);
/// let err = OptionCheck::new("demo")
///     .within("size", size, 1..=1024)
///     .at_least("runs", runs, 1)
///     .threads_per_block(threads)
///     .done()
///     .unwrap_err();
/// assert!(matches!(err, ExampleError::Options { option: "size", .. }));
/// assert!(err.to_string().contains("size must be 1..=1024, not 0"));
/// assert!(OptionCheck::new("demo").within("size", 5_u32, 1..=1024).done().is_ok());
/// ```
#[derive(Debug)]
#[must_use = "call done() for the verdict"]
pub struct OptionCheck {
    program: &'static str,
    refused: Option<(&'static str, String)>,
}

impl OptionCheck {
    /// Starts checking the options of `program`.
    pub fn new(program: &'static str) -> OptionCheck {
        OptionCheck { program, refused: None }
    }

    /// `option` must hold `holds`; `problem` says what is allowed (asked only on a refusal).
    pub fn rule(
        mut self, option: &'static str, holds: bool, problem: impl FnOnce() -> String,
    ) -> OptionCheck {
        if self.refused.is_none() && !holds {
            self.refused = Some((option, problem()));
        }
        self
    }

    /// `value` must lie in `range`: "`option` must be lo..=hi, not value".
    pub fn within<T: PartialOrd + Display>(
        self, option: &'static str, value: T, range: RangeInclusive<T>,
    ) -> OptionCheck {
        let holds = range.contains(&value);
        self.rule(option, holds, || {
            format!("{option} must be {}..={}, not {value}", range.start(), range.end())
        })
    }

    /// `value` must be `min` or more: "`option` must be at least min".
    pub fn at_least<T: PartialOrd + Display>(self, option: &'static str, value: T, min: T) -> OptionCheck {
        let holds = value >= min;
        self.rule(option, holds, || format!("{option} must be at least {min}"))
    }

    /// A CUDA block size: a multiple of 32 (whole warps) from 32 to 1024.
    pub fn threads_per_block(self, threads: u32) -> OptionCheck {
        let holds = threads != 0 && threads.is_multiple_of(32) && threads <= 1024;
        self.rule("threads_per_block", holds, || {
            format!("threads_per_block must be a multiple of 32 up to 1024, not {threads}")
        })
    }

    /// `Ok` when every rule held, else the first refusal.
    pub fn done(self) -> Result<(), ExampleError> {
        match self.refused {
            None => Ok(()),
            Some((option, problem)) => Err(ExampleError::options(self.program, option, problem)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_refusal_is_kept_and_later_rules_are_not_asked() {
        let err = OptionCheck::new("p")
            .at_least("runs", 0, 1)
            .rule("late", false, || panic!("asked after a refusal"))
            .done()
            .unwrap_err();
        assert_eq!(err, ExampleError::options("p", "runs", "runs must be at least 1"));
    }

    #[test]
    fn block_sizes_are_whole_warps_up_to_1024() {
        for (threads, ok) in [(0, false), (100, false), (32, true), (1024, true), (1056, false)] {
            assert_eq!(OptionCheck::new("p").threads_per_block(threads).done().is_ok(), ok, "{threads}");
        }
    }
}
