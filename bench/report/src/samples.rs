//! Samples and their median: what every figure of the report is made of.

/// The median of `values` (the mean of the middle two for an even count); NaN for none.
///
/// ```
/// use cuda_graph_bench_report::median;
/// assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
/// assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
/// assert!(median(&[]).is_nan());
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

/// Measurements of one figure, in the order taken.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Samples(pub Vec<f64>);

impl Samples {
    /// Adds one measurement.
    pub fn push(&mut self, value: f64) {
        self.0.push(value);
    }

    /// Their median ([`median`]).
    pub fn median(&self) -> f64 {
        median(&self.0)
    }

    /// The smallest and the largest (infinities for none).
    pub fn range(&self) -> (f64, f64) {
        let min = self.0.iter().copied().fold(f64::INFINITY, f64::min);
        let max = self.0.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        (min, max)
    }
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
        let mut even = Samples::default();
        for value in [4.0, 1.0, 3.0, 2.0] {
            even.push(value);
        }
        assert_eq!((even.median(), even.range()), (2.5, (1.0, 4.0)));
    }
}
