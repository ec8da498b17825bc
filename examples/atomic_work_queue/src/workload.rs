//! The irregular work: seeded per-item costs with a few hot spans, the work each item does, and
//! the CPU reference the GPU output must equal bit for bit.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use chapter_common::Rng;

use crate::Options;

/// How the items' costs are drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Costs {
    /// The port's: every item costs `light_cost` plus up to a quarter more, and one span in
    /// `hot_one_in` is `heavy_factor` times costlier (seeded).
    HotSpans,
    /// The chapter listing's: item `i` costs `i % 256` (its `work = idx & 255`), a sawtooth
    /// with no hot spans; `light_cost`, `heavy_factor`, `span` and `hot_one_in` are unused.
    Sawtooth,
}

/// The work of one item: `cost` rounds of an LCG step and an xorshift, started from the item's
/// index and `salt`. The kernels in `kernels/work_queue.cu` (`awq_item_work`) do the same in
/// the same 32-bit integer arithmetic, so results match exactly.
///
/// ```
/// use atomic_work_queue::item_work;
/// assert_eq!(item_work(5, 0, 7), 5u32.wrapping_mul(0x9e37_79b9) ^ 7);
/// assert_ne!(item_work(5, 10, 7), item_work(5, 11, 7));
/// ```
pub fn item_work(index: u32, cost: u32, salt: u32) -> u32 {
    chapter_common::lcg_rounds(index, cost, salt)
}

/// The inputs of one run: a cost per item and the salt mixed into every result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Workload {
    /// Iterations of [`item_work`] for each item; never zero with [`Costs::HotSpans`].
    pub costs: Vec<u32>,
    /// Mixed into every item's start value (from the seed).
    pub salt: u32,
    /// Spans of `Options::span` items the array is cut into (0 with [`Costs::Sawtooth`]).
    pub spans: usize,
    /// How many of them are hot (every item `heavy_factor` times costlier).
    pub hot_spans: usize,
}

/// The listing's period: item `i` costs `i % SAWTOOTH` with [`Costs::Sawtooth`].
pub const SAWTOOTH: u32 = 256;

impl Workload {
    /// Builds the costs from `options.seed`: every item costs `light_cost` plus up to a quarter
    /// more; exactly `max(1, spans / hot_one_in)` spans, picked at random, are hot and cost
    /// `heavy_factor` times that. Hot data comes in runs, as in real inputs (dense regions of a
    /// mesh, hub vertices stored together), which is what defeats a fixed split. With
    /// [`Costs::Sawtooth`] item `i` costs `i % 256` instead (the salt still comes from the seed).
    ///
    /// ```
    /// use atomic_work_queue::{Costs, Options, Workload};
    /// let w = Workload::build(&Options { items: 600, costs: Costs::Sawtooth, ..Options::quick() });
    /// assert_eq!((w.costs[0], w.costs[255], w.costs[256], w.costs[599]), (0, 255, 0, 87));
    /// ```
    pub fn build(options: &Options) -> Workload {
        let mut rng = Rng::new(options.seed);
        let salt = rng.next_u64() as u32;
        let items = options.items as usize;
        if options.costs == Costs::Sawtooth {
            let costs = (0..options.items).map(|i| i % SAWTOOTH).collect();
            return Workload { costs, salt, spans: 0, hot_spans: 0 };
        }
        let span = options.span.max(1) as usize;
        let spans = items.div_ceil(span);
        let hot_spans = (spans / options.hot_one_in.max(1) as usize).clamp(1, spans.max(1));
        let hot = rng.flags(spans, hot_spans);
        let jitter = options.light_cost / 4 + 1;
        let costs = (0..items)
            .map(|i| {
                let cost = options.light_cost + rng.below(jitter);
                if hot[i / span] {
                    cost * options.heavy_factor
                } else {
                    cost
                }
            })
            .collect();
        Workload { costs, salt, spans, hot_spans }
    }

    /// The sum of all costs (iterations of [`item_work`]).
    pub fn total_cost(&self) -> u64 {
        self.costs.iter().map(|&c| u64::from(c)).sum()
    }

    /// The share of all iterations that sits in hot spans' items (those costlier than the
    /// lightest hot item could be), as a fraction.
    pub fn hot_share(&self, options: &Options) -> f64 {
        let light_max = options.light_cost + options.light_cost / 4;
        let hot: u64 = self.costs.iter().filter(|&&c| c > light_max).map(|&c| u64::from(c)).sum();
        hot as f64 / self.total_cost().max(1) as f64
    }

    /// What the static split faces: the costliest of `tiles` contiguous tiles of
    /// `ceil(items / tiles)` items (the static kernel's tiles) over the mean tile.
    ///
    /// ```
    /// use atomic_work_queue::{Options, Workload};
    /// let workload = Workload::build(&Options::quick());
    /// assert!(workload.tile_imbalance(64) >= 1.0);
    /// ```
    pub fn tile_imbalance(&self, tiles: u32) -> f64 {
        let tiles = tiles.max(1) as usize;
        let tile = self.costs.len().div_ceil(tiles).max(1);
        let max =
            self.costs.chunks(tile).map(|t| t.iter().map(|&c| u64::from(c)).sum::<u64>()).max().unwrap_or(0);
        let mean = self.total_cost() as f64 / tiles as f64;
        if mean > 0.0 {
            max as f64 / mean
        } else {
            1.0
        }
    }

    /// The expected output: `item_work(i, costs[i], salt)` for every item, computed on all CPU
    /// cores. The cores take chunks from an atomic counter, the same remedy for uneven work
    /// as the GPU's.
    pub fn reference(&self) -> Vec<u32> {
        const CHUNK: usize = 4096;
        let mut out = vec![0u32; self.costs.len()];
        let slots: Vec<Mutex<&mut [u32]>> = out.chunks_mut(CHUNK).map(Mutex::new).collect();
        let next = AtomicUsize::new(0);
        let workers = std::thread::available_parallelism().map_or(1, |n| n.get()).min(slots.len().max(1));
        std::thread::scope(|scope| {
            for _ in 0..workers {
                scope.spawn(|| loop {
                    let c = next.fetch_add(1, Ordering::Relaxed);
                    let Some(slot) = slots.get(c) else { break };
                    let mut chunk = slot.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
                    for (k, value) in chunk.iter_mut().enumerate() {
                        let i = c * CHUNK + k;
                        *value = item_work(i as u32, self.costs[i], self.salt);
                    }
                });
            }
        });
        drop(slots);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn costs_are_never_zero_and_hot_spans_are_heavy() {
        let options = Options::quick();
        let w = Workload::build(&options);
        assert_eq!(w.costs.len(), options.items as usize);
        assert!(w.costs.iter().all(|&c| c >= options.light_cost));
        assert_eq!(w.hot_spans, (w.spans / options.hot_one_in as usize).max(1));
        let heavy = w.costs.iter().filter(|&&c| c >= options.light_cost * options.heavy_factor).count();
        assert_eq!(heavy, w.hot_spans * options.span as usize);
        assert!(w.hot_share(&options) > 0.2 && w.hot_share(&options) < 0.8);
    }

    #[test]
    fn the_sawtooth_is_the_listings_work_per_item() {
        let options = Options { items: 1000, costs: Costs::Sawtooth, ..Options::quick() };
        let w = Workload::build(&options);
        assert!(w.costs.iter().enumerate().all(|(i, &c)| c == (i as u32) & 255));
        assert_eq!(w.total_cost(), 3 * (255 * 256 / 2) + (0..232).sum::<u64>());
        assert_eq!((w.spans, w.hot_spans), (0, 0));
        assert_eq!(w.salt, Workload::build(&Options { items: 1000, ..Options::quick() }).salt);
    }

    #[test]
    fn the_seed_decides_the_inputs() {
        let options = Options::quick();
        assert_eq!(Workload::build(&options), Workload::build(&options));
        let other = Options { seed: options.seed + 1, ..options.clone() };
        assert_ne!(Workload::build(&options).costs, Workload::build(&other).costs);
    }

    #[test]
    fn the_parallel_reference_equals_a_serial_one() {
        let options = Options { items: 10_000, ..Options::quick() };
        let w = Workload::build(&options);
        let serial: Vec<u32> =
            w.costs.iter().enumerate().map(|(i, &c)| item_work(i as u32, c, w.salt)).collect();
        assert_eq!(w.reference(), serial);
    }

    #[test]
    fn contiguous_tiles_are_uneven_on_hot_data() {
        let w = Workload::build(&Options::default());
        assert!(w.tile_imbalance(528) > 3.0, "{}", w.tile_imbalance(528));
        assert!((w.tile_imbalance(1) - 1.0).abs() < 1e-9);
    }
}
