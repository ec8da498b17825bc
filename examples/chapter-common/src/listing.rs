//! What a port shares with the chapter's listings: which arithmetic a run does, how its
//! floats are compared with the CPU's, and the note that says where a run does what the
//! listing does and where it does not.

/// What a program's kernels compute: the port's own integer work, checked bit for bit, or the
/// chapter listing's float arithmetic, checked against the CPU as each program says.
///
/// ```
/// use chapter_common::Arithmetic;
/// assert_eq!((Arithmetic::Port.name(), Arithmetic::Listing.name()), ("port", "listing"));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Arithmetic {
    /// The port's integer work, which the CPU reproduces bit for bit.
    Port,
    /// The chapter listing's float arithmetic.
    Listing,
}

impl Arithmetic {
    /// Its name on the command line (`--arithmetic`) and in the JSON report.
    pub fn name(self) -> &'static str {
        match self {
            Arithmetic::Port => "port",
            Arithmetic::Listing => "listing",
        }
    }
}

/// How many representable `f32` values lie between `a` and `b` (0 when equal, -0 and +0
/// alike; `u32::MAX` when either is NaN): the distance a float check allows a bound on.
///
/// ```
/// use chapter_common::ulp_distance;
/// assert_eq!(ulp_distance(1.0, 1.0), 0);
/// assert_eq!(ulp_distance(1.0, f32::from_bits(1.0f32.to_bits() + 2)), 2);
/// assert_eq!(ulp_distance(-0.0, 0.0), 0);
/// assert_eq!(ulp_distance(f32::from_bits(1), -f32::from_bits(1)), 2);
/// assert_eq!(ulp_distance(f32::NAN, 1.0), u32::MAX);
/// ```
pub fn ulp_distance(a: f32, b: f32) -> u32 {
    if a.is_nan() || b.is_nan() {
        return u32::MAX;
    }
    // Ordered so that consecutive floats are consecutive integers, -0 and +0 both 0.
    let ordered = |v: f32| {
        let bits = v.to_bits() as i32;
        if bits < 0 {
            i64::from(i32::MIN) - i64::from(bits)
        } else {
            i64::from(bits)
        }
    };
    (ordered(a) - ordered(b)).unsigned_abs().min(u64::from(u32::MAX)) as u32
}

/// The note a `--book` run prints: "as the listing: ...; not as the listing: ...".
///
/// ```
/// use chapter_common::ListingNote;
/// let mut note = ListingNote::default();
/// note.put(true, "1 Mi items", "?");
/// note.put(false, "100 iterations", "20 iterations (the listing: 100)");
/// note.differs("timed as a median");
/// assert_eq!(
///     note.finish(),
///     "as the listing: 1 Mi items; not as the listing: 20 iterations (the listing: 100); timed as a median"
/// );
/// ```
#[derive(Debug, Default)]
pub struct ListingNote {
    same: Vec<String>,
    differs: Vec<String>,
}

impl ListingNote {
    /// `as_listed` when the run `holds` to the listing, else what it does instead (`here`).
    pub fn put(&mut self, holds: bool, as_listed: &str, here: impl Into<String>) {
        if holds {
            self.same.push(as_listed.to_string());
        } else {
            self.differs.push(here.into());
        }
    }

    /// A difference every run has.
    pub fn differs(&mut self, here: impl Into<String>) {
        self.differs.push(here.into());
    }

    /// The note.
    pub fn finish(self) -> String {
        format!("as the listing: {}; not as the listing: {}", self.same.join(", "), self.differs.join("; "))
    }
}
