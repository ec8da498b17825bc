//! The irregular work: seeded per-item costs with a few hot spans, the work each item does (the
//! port's integer rounds or the listing's `sinf`/`cosf` rounds), and the CPU reference the GPU
//! output must equal bit for bit.

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

/// The listing's value of item `index` of `n`: `index / n` in `f32`, as the listing fills its
/// input (`(float)i / N`) and the kernels compute it (`kernels/work_queue.cu`: `awq_listing_x`).
///
/// ```
/// assert_eq!(atomic_work_queue::listing_x(3, 4), 0.75);
/// ```
pub fn listing_x(index: u32, n: u32) -> f32 {
    index as f32 / n as f32
}

/// The listing's work of one item: `cost` rounds of `result += sinf(x) * cosf(x)` from 0, each
/// round one fused multiply-add (what nvcc makes of the listing's statement, and what the
/// kernels write out), given the values of `sinf(x)` and `cosf(x)`. The kernels compute those
/// on the GPU; with the GPU's own values (a [`SinCosTable`]) the result is the GPU's bit for bit.
///
/// ```
/// use atomic_work_queue::listing_item_work;
/// assert_eq!(listing_item_work(0, 0.5, 0.5), 0.0);
/// assert_eq!(listing_item_work(3, 0.5, 0.5), 0.75);
/// ```
pub fn listing_item_work(cost: u32, sin: f32, cos: f32) -> f32 {
    (0..cost).fold(0.0f32, |result, _| sin.mul_add(cos, result))
}

/// The CPU's sine and cosine of `x`: computed in `f64` and rounded to `f32`, so within half an
/// `f32` ulp (and a hair) of the exact values, whatever the platform's `sinf` does.
///
/// ```
/// let (sin, cos) = atomic_work_queue::cpu_sin_cos(0.0);
/// assert_eq!((sin, cos), (0.0, 1.0));
/// ```
pub fn cpu_sin_cos(x: f32) -> (f32, f32) {
    let x = f64::from(x);
    (x.sin() as f32, x.cos() as f32)
}

pub use chapter_common::ulp_distance;

/// The most ulps the GPU's `sinf` and `cosf` may be from the CPU's values
/// ([`cpu_sin_cos`]): CUDA documents a maximum error of 2 ulps for both (without
/// `-use_fast_math`, which swaps in `__sinf`/`__cosf`); the CPU's value is the exact one
/// rounded to nearest, half an ulp off at most, so the two are at most 2.5 ulps apart, and
/// being both `f32` values, at most 2 steps of the float grid.
pub const SINCOS_MAX_ULPS: u32 = 2;

/// The GPU's own `sinf(x)` and `cosf(x)` of every item's `x` ([`listing_x`]).
#[derive(Debug, Clone, PartialEq)]
pub struct SinCosTable {
    /// `sinf(x)` of each item.
    pub sines: Vec<f32>,
    /// `cosf(x)` of each item.
    pub cosines: Vec<f32>,
}

/// How far the GPU's `sinf` and `cosf` are from the CPU's, over every item.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SinCosAgreement {
    /// Values (sines and cosines) compared.
    pub values: usize,
    /// How many of them are not the CPU's bit for bit.
    pub differing: usize,
    /// The largest distance from the CPU's value, in ulps ([`ulp_distance`]).
    pub max_ulps: u32,
    /// The item of [`max_ulps`](Self::max_ulps) (0 when none differs).
    pub worst_item: usize,
}

impl SinCosTable {
    /// Compares every value with the CPU's ([`cpu_sin_cos`] of [`listing_x`]).
    ///
    /// ```
    /// use atomic_work_queue::{cpu_sin_cos, listing_x, SinCosTable};
    /// let n = 8;
    /// let (sines, cosines) = (0..n).map(|i| cpu_sin_cos(listing_x(i, n))).unzip();
    /// let mut table = SinCosTable { sines, cosines };
    /// assert_eq!(table.agreement().differing, 0);
    /// table.cosines[5] = f32::from_bits(table.cosines[5].to_bits() + 3);
    /// let agreement = table.agreement();
    /// assert_eq!((agreement.differing, agreement.max_ulps, agreement.worst_item), (1, 3, 5));
    /// ```
    pub fn agreement(&self) -> SinCosAgreement {
        let n = self.sines.len() as u32;
        let mut agreement = SinCosAgreement { values: 0, differing: 0, max_ulps: 0, worst_item: 0 };
        for (i, (&sin, &cos)) in self.sines.iter().zip(&self.cosines).enumerate() {
            let (want_sin, want_cos) = cpu_sin_cos(listing_x(i as u32, n));
            for ulps in [ulp_distance(sin, want_sin), ulp_distance(cos, want_cos)] {
                agreement.values += 1;
                if ulps > 0 {
                    agreement.differing += 1;
                }
                if ulps > agreement.max_ulps {
                    (agreement.max_ulps, agreement.worst_item) = (ulps, i);
                }
            }
        }
        agreement
    }
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

    /// The expected output of the port's work: `item_work(i, costs[i], salt)` for every item,
    /// computed on all CPU cores.
    pub fn reference(&self) -> Vec<u32> {
        self.reference_by(|i, cost| item_work(i as u32, cost, self.salt))
    }

    /// The expected output of the listing's work: the bits of `listing_item_work(costs[i],
    /// sin, cos)` for every item, with `sin` and `cos` the GPU's values of `table` (computed
    /// on all CPU cores).
    ///
    /// ```
    /// use atomic_work_queue::{Costs, Options, SinCosTable, Workload};
    /// let w = Workload::build(&Options { items: 300, costs: Costs::Sawtooth, ..Options::quick() });
    /// let table = SinCosTable { sines: vec![0.5; 300], cosines: vec![0.5; 300] };
    /// let out = w.listing_reference(&table);
    /// let value = |i: usize| f32::from_bits(out[i]);
    /// assert_eq!((value(0), value(4), value(257)), (0.0, 1.0, 0.25));
    /// ```
    pub fn listing_reference(&self, table: &SinCosTable) -> Vec<u32> {
        self.reference_by(|i, cost| listing_item_work(cost, table.sines[i], table.cosines[i]).to_bits())
    }

    /// `work(i, costs[i])` for every item, on all CPU cores. The cores take chunks from an
    /// atomic counter, the same remedy for uneven work as the GPU's.
    fn reference_by(&self, work: impl Fn(usize, u32) -> u32 + Sync) -> Vec<u32> {
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
                        *value = work(i, self.costs[i]);
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
    fn every_round_shows_in_the_listings_result() {
        // The check compares bits, so it counts rounds if one round more or fewer always
        // changes the result: true while sinf(x) * cosf(x) is above half an ulp of the sum,
        // for costs far beyond the default's hot items (up to 16 x 320).
        let n = 1 << 16;
        for i in (1..n).step_by(97) {
            let (sin, cos) = cpu_sin_cos(listing_x(i, n));
            for cost in [1, 2, 127, 255, 320, 5119, 5120] {
                let at = |c| listing_item_work(c, sin, cos).to_bits();
                assert_ne!(at(cost), at(cost - 1), "item {i}, cost {cost}");
                assert_ne!(at(cost), at(cost + 1), "item {i}, cost {cost}");
            }
        }
    }

    #[test]
    fn no_listing_result_is_the_nan_the_output_is_filled_with() {
        let options = Options { items: 5000, ..Options::listing() };
        let w = Workload::build(&options);
        let (sines, cosines) = (0..options.items).map(|i| cpu_sin_cos(listing_x(i, options.items))).unzip();
        let reference = w.listing_reference(&SinCosTable { sines, cosines });
        assert!(f32::from_bits(u32::from_ne_bytes([0xff; 4])).is_nan());
        assert!(reference.iter().all(|&bits| f32::from_bits(bits).is_finite()));
        // Item 0 (x = 0) and every item of cost 0 are exactly 0: only the fill tells a
        // skipped one apart.
        assert_eq!(reference[0], 0);
        assert_eq!(reference[256], 0);
        assert!(f32::from_bits(reference[255]) > 0.0);
    }

    #[test]
    fn the_listings_rounds_are_fused_multiply_adds() {
        // A round rounds once (the GPU's fma.rn), not after the product and again after the
        // sum: over the listing's items the two differ, so the model's choice matters.
        let n = 1 << 16;
        let differing = (1..n)
            .step_by(61)
            .filter(|&i| {
                let (sin, cos) = cpu_sin_cos(listing_x(i, n));
                let unfused = (0..255).fold(0.0f32, |r, _| sin * cos + r);
                let fused = listing_item_work(255, sin, cos);
                assert_eq!(fused, (0..255).fold(0.0f32, |r, _| sin.mul_add(cos, r)));
                fused != unfused
            })
            .count();
        assert!(differing > 0);
    }

    #[test]
    fn the_cpu_sine_is_within_half_an_ulp_of_the_platforms() {
        // The CPU's values are the f64 functions rounded; the platform's f32 functions agree to
        // within an ulp, so the 2-ulp allowance is not eaten by the CPU side.
        for i in 0..4096 {
            let x = listing_x(i, 4096);
            let (sin, cos) = cpu_sin_cos(x);
            assert!(ulp_distance(sin, x.sin()) <= 1 && ulp_distance(cos, x.cos()) <= 1, "x = {x}");
        }
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
