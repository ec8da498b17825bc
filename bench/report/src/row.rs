//! One line of the results: an operation at one parameter, the Rust path's and the C++ twin's
//! figures, each the median of its samples with their least and most.

use crate::samples::Samples;

/// One side's figure: the median of its samples, their least and most, and how many there
/// were. A results folder's `bench.csv` holds exactly this, so a report read back from it is
/// the report the run wrote.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Summary {
    /// The median of the samples.
    pub median: f64,
    /// The least sample.
    pub min: f64,
    /// The most.
    pub max: f64,
    /// How many samples.
    pub count: usize,
}

impl Summary {
    /// The summary of `samples`.
    ///
    /// ```
    /// use cuda_graph_bench_report::{Samples, Summary};
    /// let s = Summary::of(&Samples(vec![3.0, 1.0, 2.0]));
    /// assert_eq!((s.median, s.range(), s.count), (2.0, (1.0, 3.0), 3));
    /// ```
    pub fn of(samples: &Samples) -> Summary {
        let (min, max) = samples.range();
        Summary { median: samples.median(), min, max, count: samples.0.len() }
    }

    /// One sample.
    pub fn one(value: f64) -> Summary {
        Summary { median: value, min: value, max: value, count: 1 }
    }

    /// The least and the most sample.
    pub fn range(&self) -> (f64, f64) {
        (self.min, self.max)
    }
}

/// One line of the results: an operation at one parameter, both sides.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// What was measured, e.g. `graph replay, kernel chain` ([`crate::operations`]).
    pub operation: String,
    /// Its parameter, e.g. `nodes=100`.
    pub parameter: String,
    /// The unit of the figures, e.g. `µs/node`.
    pub unit: String,
    /// The Rust path's samples.
    pub rust: Summary,
    /// The C++ twin's samples.
    pub cpp: Summary,
}

impl Row {
    /// A row from both sides' summaries.
    pub fn new(
        operation: impl Into<String>, parameter: impl Into<String>, unit: impl Into<String>, rust: Summary,
        cpp: Summary,
    ) -> Row {
        Row { operation: operation.into(), parameter: parameter.into(), unit: unit.into(), rust, cpp }
    }

    /// A row of one sample a side.
    ///
    /// ```
    /// let row = cuda_graph_bench_report::Row::single("graph instantiate", "nodes=100", "µs", 150.0, 120.0);
    /// assert_eq!((row.rust(), row.cpp(), row.ratio()), (150.0, 120.0, 1.25));
    /// ```
    pub fn single(
        operation: impl Into<String>, parameter: impl Into<String>, unit: impl Into<String>, rust: f64,
        cpp: f64,
    ) -> Row {
        Row::new(operation, parameter, unit, Summary::one(rust), Summary::one(cpp))
    }

    /// The Rust path's median.
    pub fn rust(&self) -> f64 {
        self.rust.median
    }

    /// The C++ twin's median.
    pub fn cpp(&self) -> f64 {
        self.cpp.median
    }

    /// Rust median over C++ median (1.0 is parity; above it the Rust path is slower).
    pub fn ratio(&self) -> f64 {
        self.rust() / self.cpp()
    }

    /// Whether this is the row of `operation` at `parameter` (at any parameter for `None`).
    pub fn is(&self, operation: &str, parameter: Option<&str>) -> bool {
        self.operation == operation && parameter.is_none_or(|parameter| self.parameter == parameter)
    }
}
