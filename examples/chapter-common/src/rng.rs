//! A small seeded generator (SplitMix64): reproducible inputs from `--seed`.

/// Reproducible pseudo-random numbers.
///
/// ```
/// let mut rng = chapter_common::Rng::new(7);
/// let v = rng.vec_f32(4, -1.0, 1.0);
/// assert!(v.iter().all(|x| (-1.0..1.0).contains(x)));
/// assert_eq!(chapter_common::Rng::new(7).vec_f32(4, -1.0, 1.0), v);
/// ```
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator for `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A value in `0..bound` (`bound` > 0).
    pub fn below(&mut self, bound: u32) -> u32 {
        (((self.next_u64() >> 32) * bound as u64) >> 32) as u32
    }

    /// A value in `[lo, hi)`.
    pub fn f32_in(&mut self, lo: f32, hi: f32) -> f32 {
        let unit = (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32;
        lo + (hi - lo) * unit
    }

    /// `len` values in `[lo, hi)`.
    pub fn vec_f32(&mut self, len: usize, lo: f32, hi: f32) -> Vec<f32> {
        (0..len).map(|_| self.f32_in(lo, hi)).collect()
    }

    /// `len` flags of which `count` (at most `len`), at places picked at random, are set: a
    /// partial Fisher-Yates shuffle, one [`below`](Rng::below) per flag set.
    ///
    /// ```
    /// let hot = chapter_common::Rng::new(5).flags(10, 3);
    /// assert_eq!(hot.iter().filter(|&&h| h).count(), 3);
    /// assert_eq!(chapter_common::Rng::new(5).flags(10, 3), hot);
    /// ```
    pub fn flags(&mut self, len: usize, count: usize) -> Vec<bool> {
        let count = count.min(len);
        let mut order: Vec<usize> = (0..len).collect();
        for k in 0..count {
            let pick = k + self.below((len - k) as u32) as usize;
            order.swap(k, pick);
        }
        let mut flags = vec![false; len];
        for &i in &order[..count] {
            flags[i] = true;
        }
        flags
    }

    /// `len` values in `0..bound`.
    pub fn vec_below(&mut self, len: usize, bound: u32) -> Vec<u32> {
        (0..len).map(|_| self.below(bound)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_stay_in_range_and_are_not_constant() {
        let mut rng = Rng::new(1);
        let v = rng.vec_below(1000, 10);
        assert!(v.iter().all(|&x| x < 10));
        assert!(v.iter().any(|&x| x != v[0]));
    }

    #[test]
    fn different_seeds_give_different_streams() {
        assert_ne!(Rng::new(1).next_u64(), Rng::new(2).next_u64());
    }
}
