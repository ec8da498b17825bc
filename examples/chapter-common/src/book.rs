//! The chapter's own workload for a program (`--book`): the port's default often measures
//! a workload of its own (harder, or shaped for a point), so its ratios cannot be set beside
//! the chapter's figures; [`Book`] says what the chapter's listing runs and how to run it here.

/// Options that run the workload of the chapter's listing with a port's code.
#[derive(Debug, Clone, PartialEq)]
pub struct Preset<O> {
    /// The listing's sizes, launch shapes, work per item and iteration counts, as far as the
    /// listing states them and the port's options can express them.
    pub options: O,
    /// The same shapes, smaller: a quick correctness pass (tests, `--book --quick`).
    pub quick: O,
}

/// What the chapter's own program runs, next to the port's default.
///
/// Every variant carries a `note` for people: which listing it is (the book's file), and what
/// of its workload the port cannot reproduce or the listing does not state. The chapter table
/// (`ch12`) prints it under the table, the example's README says the same in a paragraph.
///
/// ```
/// use chapter_common::{Book, Preset};
///
/// let book: Book<u32> = Book::Preset {
///     preset: Preset { options: 1 << 20, quick: 1 << 12 },
///     note: "demo.cu: 1 Mi elements",
/// };
/// let default = |quick: bool| if quick { 256 } else { 4096 };
/// assert_eq!(book.options_or(default, false), Some(1 << 20));
/// assert_eq!(book.options_or(default, true), Some(1 << 12));
/// assert_eq!(book.kind(), "preset");
///
/// let unlisted: Book<u32> = Book::NoListing { note: "the chapter gives no program" };
/// assert_eq!(unlisted.options_or(default, false), None);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub enum Book<O> {
    /// The port's default options already run the listing's workload.
    SameAsPort {
        /// The listing, and why the default is its workload.
        note: &'static str,
    },
    /// Options that run the listing's workload (the port's default runs another one).
    Preset {
        /// The listing's workload.
        preset: Preset<O>,
        /// The listing, and what differs from the port's default.
        note: &'static str,
    },
    /// The chapter has no program for this one (text, or a sketch without sizes): there is
    /// no workload of its own to run.
    NoListing {
        /// What the chapter gives instead.
        note: &'static str,
    },
    /// The chapter's program is broken (it does not compile, or the part it is about never
    /// runs); `preset`, when there is one, runs what of its workload can run.
    Broken {
        /// Why, in a few words (the table's cell).
        why: &'static str,
        /// The workload of the listing's parts that do run, if the port can express it.
        preset: Option<Preset<O>>,
        /// The listing, what is broken in detail, and what the preset runs.
        note: &'static str,
    },
}

impl<O: Clone> Book<O> {
    /// The options `--book` runs: the preset's (quick: its small form), `default` for
    /// [`Book::SameAsPort`], or `None` when there is no workload of the chapter's to run.
    pub fn options_or(&self, default: impl FnOnce(bool) -> O, quick: bool) -> Option<O> {
        match self {
            Book::SameAsPort { .. } => Some(default(quick)),
            Book::Preset { preset, .. } | Book::Broken { preset: Some(preset), .. } => {
                Some(if quick { preset.quick.clone() } else { preset.options.clone() })
            }
            Book::NoListing { .. } | Book::Broken { preset: None, .. } => None,
        }
    }
}

impl<O> Book<O> {
    /// `"same"`, `"preset"`, `"no listing"` or `"broken"`: the JSON form's `kind`.
    pub fn kind(&self) -> &'static str {
        match self {
            Book::SameAsPort { .. } => "same",
            Book::Preset { .. } => "preset",
            Book::NoListing { .. } => "no listing",
            Book::Broken { .. } => "broken",
        }
    }

    /// The note for people (see [`Book`]).
    pub fn note(&self) -> &'static str {
        match self {
            Book::SameAsPort { note } | Book::Preset { note, .. } | Book::NoListing { note } => note,
            Book::Broken { note, .. } => note,
        }
    }

    /// Why the chapter's program is broken, for [`Book::Broken`].
    pub fn broken_why(&self) -> Option<&'static str> {
        match self {
            Book::Broken { why, .. } => Some(why),
            _ => None,
        }
    }

    /// Whether a run of the chapter's workload is something `--book` can do.
    pub fn runs(&self) -> bool {
        matches!(self, Book::SameAsPort { .. } | Book::Preset { .. } | Book::Broken { preset: Some(_), .. })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn preset() -> Preset<u32> {
        Preset { options: 100, quick: 10 }
    }

    #[test]
    fn each_variant_gives_the_options_it_has() {
        let default = |quick: bool| if quick { 2 } else { 20 };
        let same: Book<u32> = Book::SameAsPort { note: "n" };
        assert_eq!((same.options_or(default, false), same.options_or(default, true)), (Some(20), Some(2)));
        let with = Book::Preset { preset: preset(), note: "n" };
        assert_eq!((with.options_or(default, false), with.options_or(default, true)), (Some(100), Some(10)));
        let broken = Book::Broken { why: "w", preset: Some(preset()), note: "n" };
        assert_eq!(broken.options_or(default, true), Some(10));
        assert_eq!(broken.broken_why(), Some("w"));
        let broken_bare: Book<u32> = Book::Broken { why: "w", preset: None, note: "n" };
        assert_eq!(broken_bare.options_or(default, false), None);
        let none: Book<u32> = Book::NoListing { note: "n" };
        assert_eq!(none.options_or(default, false), None);
        assert_eq!(
            [same.runs(), with.runs(), broken.runs(), broken_bare.runs(), none.runs()],
            [true, true, true, false, false]
        );
    }

    #[test]
    fn kinds_are_distinct_and_notes_are_kept() {
        let books: [Book<u32>; 4] = [
            Book::SameAsPort { note: "a" },
            Book::Preset { preset: preset(), note: "b" },
            Book::NoListing { note: "c" },
            Book::Broken { why: "w", preset: None, note: "d" },
        ];
        let kinds: Vec<&str> = books.iter().map(Book::kind).collect();
        assert_eq!(kinds, ["same", "preset", "no listing", "broken"]);
        let notes: Vec<&str> = books.iter().map(Book::note).collect();
        assert_eq!(notes, ["a", "b", "c", "d"]);
    }
}
