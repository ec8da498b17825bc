//! The pipeline's arithmetic and its CPU reference.
//!
//! A stage maps every value through three affine passes `x * a + b` (wrapping 32-bit
//! arithmetic, as the kernel does). Affine maps compose into affine maps, so a whole iteration
//! (six stages, 18 passes) is one map `x * A + B`, and `iters` iterations are that map raised
//! to the `iters`-th power by repeated squaring: the reference for 10 000 iterations costs a
//! few dozen multiplications per value, not 180 000, and is still exact.

use chapter_common::Rng;

/// Stages of the pipeline.
pub const STAGES: usize = 6;
/// Affine passes per stage.
pub const PASSES: usize = 3;

/// `x -> x * a + b` modulo 2^32.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Affine {
    /// The multiplier (odd: the map is a bijection).
    pub a: u32,
    /// The addend.
    pub b: u32,
}

impl Affine {
    /// The map that changes nothing.
    pub const IDENTITY: Affine = Affine { a: 1, b: 0 };

    /// Applies the map.
    pub fn apply(self, x: u32) -> u32 {
        x.wrapping_mul(self.a).wrapping_add(self.b)
    }

    /// This map followed by `next`.
    ///
    /// ```
    /// use cuda_graphs_pipeline::model::Affine;
    /// let (f, g) = (Affine { a: 3, b: 5 }, Affine { a: 7, b: 11 });
    /// assert_eq!(f.then(g).apply(123), g.apply(f.apply(123)));
    /// ```
    pub fn then(self, next: Affine) -> Affine {
        Affine { a: self.a.wrapping_mul(next.a), b: self.b.wrapping_mul(next.a).wrapping_add(next.b) }
    }

    /// The map applied `times` times in a row (repeated squaring).
    ///
    /// ```
    /// use cuda_graphs_pipeline::model::Affine;
    /// let f = Affine { a: 0x9e37_79b1, b: 12345 };
    /// let slow = (0..1000).fold(77u32, |x, _| f.apply(x));
    /// assert_eq!(f.power(1000).apply(77), slow);
    /// ```
    pub fn power(self, mut times: u64) -> Affine {
        let (mut result, mut square) = (Affine::IDENTITY, self);
        while times > 0 {
            if times & 1 == 1 {
                result = result.then(square);
            }
            square = square.then(square);
            times >>= 1;
        }
        result
    }
}

/// The constants of every stage: `[stage][pass]`, fixed (they are the pipeline, not its data).
pub fn stage_maps() -> [[Affine; PASSES]; STAGES] {
    let mut rng = Rng::new(0x00c1_2a9e_5eed);
    let mut maps = [[Affine::IDENTITY; PASSES]; STAGES];
    for stage in maps.iter_mut() {
        for pass in stage.iter_mut() {
            let bits = rng.next_u64();
            *pass = Affine { a: (bits as u32) | 1, b: (bits >> 32) as u32 };
        }
    }
    maps
}

/// One whole iteration (the six stages) as one map.
pub fn iteration_map() -> Affine {
    stage_maps().iter().flatten().fold(Affine::IDENTITY, |acc, &pass| acc.then(pass))
}

/// The CPU reference: `input` after `iters` iterations of the pipeline.
pub fn reference(input: &[u32], iters: u64) -> Vec<u32> {
    let map = iteration_map().power(iters);
    input.iter().map(|&x| map.apply(x)).collect()
}

/// The sum of the values, as the report's checksum (exact in an `f64`: fewer than 2^21 values
/// below 2^32).
pub fn checksum(values: &[u32]) -> f64 {
    values.iter().map(|&x| u64::from(x)).sum::<u64>() as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Stage by stage, pass by pass, as the kernels run them.
    fn brute_force(input: &[u32], iters: u64) -> Vec<u32> {
        let maps = stage_maps();
        input
            .iter()
            .map(|&x| (0..iters).fold(x, |x, _| maps.iter().flatten().fold(x, |x, pass| pass.apply(x))))
            .collect()
    }

    #[test]
    fn the_reference_equals_running_every_pass() {
        let input: Vec<u32> = (0..64u32).map(|i| i.wrapping_mul(0x9e37_79b9) ^ 0xdead_beef).collect();
        for iters in [0, 1, 2, 3, 7, 64, 1000] {
            assert_eq!(reference(&input, iters), brute_force(&input, iters), "{iters} iterations");
        }
    }

    #[test]
    fn a_missing_or_extra_iteration_shows() {
        let input = [1u32, 2, 3, 0xffff_ffff];
        let want = reference(&input, 10_000);
        assert_ne!(reference(&input, 9_999), want);
        assert_ne!(reference(&input, 10_001), want);
        assert!(stage_maps().iter().flatten().all(|p| p.a % 2 == 1));
    }

    #[test]
    fn checksum_is_the_exact_sum() {
        assert_eq!(checksum(&[u32::MAX, u32::MAX, 2]), 2.0 * f64::from(u32::MAX) + 2.0);
    }
}
