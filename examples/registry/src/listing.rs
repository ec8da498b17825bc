//! What the chapter's own listing is for a program: a [`Book`] without its options.

use chapter_common::Book;

/// What the chapter's own listing is for a program (a [`Book`] without its options).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Listing {
    /// [`Book::kind`]: `same`, `preset`, `no listing` or `broken`.
    pub kind: &'static str,
    /// [`Book::note`].
    pub note: &'static str,
    /// [`Book::broken_why`].
    pub why: Option<&'static str>,
    /// Whether `--book` runs something for it ([`Book::runs`]).
    pub runs: bool,
}

impl Listing {
    /// The listing a program's [`Book`] describes.
    ///
    /// ```
    /// let book: chapter_common::Book<u32> = chapter_common::Book::NoListing { note: "no sizes" };
    /// let listing = chapter_registry::Listing::of(&book);
    /// assert_eq!((listing.kind, listing.runs), ("no listing", false));
    /// ```
    pub fn of<O>(book: &Book<O>) -> Listing {
        Listing { kind: book.kind(), note: book.note(), why: book.broken_why(), runs: book.runs() }
    }

    /// Whether the port's default already is the listing's workload.
    pub fn same_as_port(&self) -> bool {
        self.kind == "same"
    }
}
