//! Medians of repeated timings.

use std::time::Instant;

/// The median of `values` (the mean of the two middle ones for an even count); NaN if empty.
///
/// ```
/// assert_eq!(chapter_common::median(&[3.0, 1.0, 2.0]), 2.0);
/// assert_eq!(chapter_common::median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
/// ```
pub fn median(values: &[f64]) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(|a, b| a.total_cmp(b));
    let mid = sorted.len() / 2;
    if sorted.len() % 2 == 1 {
        sorted[mid]
    } else {
        (sorted[mid - 1] + sorted[mid]) / 2.0
    }
}

/// Repeated measurements of one figure.
#[derive(Debug, Clone, Default)]
pub struct Samples(pub Vec<f64>);

impl Samples {
    /// Adds one measurement.
    pub fn push(&mut self, value: f64) {
        self.0.push(value);
    }
    /// Their median.
    pub fn median(&self) -> f64 {
        median(&self.0)
    }
    /// The smallest and largest.
    pub fn range(&self) -> (f64, f64) {
        let min = self.0.iter().copied().fold(f64::INFINITY, f64::min);
        let max = self.0.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        (min, max)
    }
    /// The median, smallest, largest and every run, as one JSON object.
    ///
    /// ```
    /// let s = chapter_common::Samples(vec![2.0, 9.0, 4.0]);
    /// assert_eq!(s.to_json(), serde_json::json!({"median": 4.0, "min": 2.0, "max": 9.0, "runs": [2.0, 9.0, 4.0]}));
    /// ```
    pub fn to_json(&self) -> serde_json::Value {
        let (min, max) = self.range();
        serde_json::json!({"median": self.median(), "min": min, "max": max, "runs": self.0})
    }
}

/// Runs `work` and returns its result and wall time in milliseconds. `work` must synchronize
/// the device before returning for the time to mean anything.
pub fn time_ms<T>(work: impl FnOnce() -> T) -> (T, f64) {
    let start = Instant::now();
    let value = work();
    (value, start.elapsed().as_secs_f64() * 1e3)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_nothing_is_nan_and_range_spans_all() {
        assert!(median(&[]).is_nan());
        let s = Samples(vec![2.0, 9.0, 4.0]);
        assert_eq!(s.range(), (2.0, 9.0));
        assert_eq!(s.median(), 4.0);
    }
}
