//! The decoder: an embedding, two GRU layers and an output layer over a small vocabulary, its
//! weights generated from a seed on grids that make the arithmetic exact.
//!
//! # Why every implementation gets the same tokens
//! Floating-point sums depend on their order, and the CUDA kernels, the CPU reference and
//! PyTorch (cuBLAS) all sum in different orders. Here no sum is ever rounded:
//! - weights and biases are multiples of 2^-10 ([`WEIGHT_SCALE`]) with at most 7 significant
//!   bits; activations and embeddings are multiples of 2^-7 ([`ACT_SCALE`]) in [-1, 1];
//! - so every product in a matrix-vector product is an integer multiple of 2^-17, and every
//!   partial sum too, bounded by [`Model::exactness_margin`] well under 2^24 such units: f32
//!   holds every one of them exactly, in any order, with or without fused multiply-adds;
//! - the nonlinearities are tables ([`Model::sigmoid`], [`Model::tanh`]) indexed by the
//!   pre-activation rounded to a 1/32 grid (round half to even, as CUDA's `rintf`, Rust's
//!   `round_ties_even` and `torch.round` do), holding values already on the 2^-7 grid;
//! - the new hidden state `(1 - z) n + z h` is exact on the 2^-14 grid, then rounded back to
//!   the 2^-7 grid ([`quantize`]).
//!
//! One value is rounded: the candidate gate's `gi_n + r * gh_n` (a product of an 8-bit and a
//! 22-bit number). Every implementation computes it as one rounded multiply, then one rounded
//! add (`__fmul_rn`, `__fadd_rn` in the kernels, no contraction into a fused multiply-add), so
//! it too is the same everywhere. Greedy decoding takes the first largest logit (lowest index on
//! ties), which is `argmax` of the softmax too; the softmax itself (`expf`) differs in its last
//! bits between libraries and only gives each chosen token's probability, compared within a
//! tolerance.

use chapter_common::Rng;

/// Hidden units of each GRU layer, and the embedding width.
pub const HIDDEN: usize = 128;
/// Tokens in the vocabulary.
pub const VOCAB: usize = 512;
/// GRU layers.
pub const LAYERS: usize = 2;
/// The end token: a sequence that emits it is finished.
pub const END: u32 = 0;
/// The most sequences one generation runs (the kernels' `GL_MAX_BATCH`).
pub const MAX_BATCH: usize = 64;
/// Activations and embeddings are multiples of `1 / ACT_SCALE` in [-1, 1].
pub const ACT_SCALE: f32 = 128.0;
/// Weights and biases are multiples of `1 / WEIGHT_SCALE`.
pub const WEIGHT_SCALE: f32 = 1024.0;
/// The largest weight, in units of `1 / WEIGHT_SCALE`.
pub const WEIGHT_MAX: u32 = 127;
/// Table index: the pre-activation times `TABLE_SCALE`, rounded, clamped to
/// `-TABLE_HALF..=TABLE_HALF`, plus `TABLE_HALF`.
pub const TABLE_SCALE: f32 = 32.0;
/// Half the span of a table (its middle entry is the pre-activation 0).
pub const TABLE_HALF: i32 = 256;
/// Entries of each activation table.
pub const TABLE_LEN: usize = 2 * TABLE_HALF as usize + 1;

/// One GRU layer, PyTorch's layout: gate rows in the order r, z, n; each weight matrix
/// row-major, `[3 * HIDDEN][HIDDEN]`.
#[derive(Debug, Clone, PartialEq)]
pub struct GruLayer {
    /// Input weights `W_ih`.
    pub w_ih: Vec<f32>,
    /// Input biases `b_ih`.
    pub b_ih: Vec<f32>,
    /// Hidden weights `W_hh`.
    pub w_hh: Vec<f32>,
    /// Hidden biases `b_hh`.
    pub b_hh: Vec<f32>,
}

/// The whole decoder.
#[derive(Debug, Clone, PartialEq)]
pub struct Model {
    /// `[VOCAB][HIDDEN]`, on the activation grid.
    pub embedding: Vec<f32>,
    /// The GRU layers, first to last.
    pub layers: Vec<GruLayer>,
    /// Output weights `[VOCAB][HIDDEN]`.
    pub w_out: Vec<f32>,
    /// Output biases `[VOCAB]`; the end token's carries the end bias.
    pub b_out: Vec<f32>,
    /// `sigmoid((i - TABLE_HALF) / TABLE_SCALE)` on the activation grid.
    pub sigmoid: Vec<f32>,
    /// `tanh((i - TABLE_HALF) / TABLE_SCALE)` on the activation grid.
    pub tanh: Vec<f32>,
}

/// `units / WEIGHT_SCALE` for `units` drawn from `-max..=max`.
fn weights(rng: &mut Rng, len: usize, max: u32) -> Vec<f32> {
    (0..len).map(|_| (rng.below(2 * max + 1) as f32 - max as f32) / WEIGHT_SCALE).collect()
}

/// Rounds `v` to the activation grid (half to even): `rint(v * 128) / 128`, exact steps.
///
/// ```
/// use generation_loop::model::quantize;
/// assert_eq!(quantize(0.5 / 128.0), 0.0); // a tie goes to the even neighbour
/// assert_eq!(quantize(1.5 / 128.0), 2.0 / 128.0);
/// assert_eq!(quantize(-0.3), -38.0 / 128.0);
/// ```
pub fn quantize(v: f32) -> f32 {
    (v * ACT_SCALE).round_ties_even() / ACT_SCALE
}

/// The table entry of a pre-activation: `clamp(rint(v * 32), -256, 256) + 256`.
///
/// ```
/// use generation_loop::model::{table_index, TABLE_HALF};
/// assert_eq!(table_index(0.0), TABLE_HALF as usize);
/// assert_eq!(table_index(1.0 / 64.0), TABLE_HALF as usize); // 0.5 rounds to 0
/// assert_eq!(table_index(-100.0), 0);
/// ```
pub fn table_index(v: f32) -> usize {
    let half = TABLE_HALF as f32;
    ((v * TABLE_SCALE).round_ties_even().clamp(-half, half) + half) as usize
}

/// A table of `f` over the index range, each entry rounded to the activation grid (in f64).
fn table(f: impl Fn(f64) -> f64) -> Vec<f32> {
    (0..TABLE_LEN)
        .map(|i| {
            let x = (i as f64 - f64::from(TABLE_HALF)) / f64::from(TABLE_SCALE);
            ((f(x) * f64::from(ACT_SCALE)).round_ties_even() / f64::from(ACT_SCALE)) as f32
        })
        .collect()
}

impl Model {
    /// The model of `seed`: weights uniform on their grid up to [`WEIGHT_MAX`], embeddings
    /// uniform on the activation grid, and `end_bias` (in units of `1 / WEIGHT_SCALE`) added to
    /// the end token's output bias: the larger, the sooner sequences stop.
    ///
    /// ```
    /// let model = generation_loop::model::Model::generate(1, 0);
    /// assert!(model.exactness_margin() >= 4.0);
    /// assert_eq!(model, generation_loop::model::Model::generate(1, 0));
    /// ```
    pub fn generate(seed: u64, end_bias: i32) -> Model {
        let mut rng = Rng::new(seed);
        let embedding = (0..VOCAB * HIDDEN).map(|_| (rng.below(257) as f32 - 128.0) / ACT_SCALE).collect();
        let rows = 3 * HIDDEN;
        let layers = (0..LAYERS)
            .map(|_| GruLayer {
                w_ih: weights(&mut rng, rows * HIDDEN, WEIGHT_MAX),
                b_ih: weights(&mut rng, rows, WEIGHT_MAX),
                w_hh: weights(&mut rng, rows * HIDDEN, WEIGHT_MAX),
                b_hh: weights(&mut rng, rows, WEIGHT_MAX),
            })
            .collect();
        let w_out = weights(&mut rng, VOCAB * HIDDEN, WEIGHT_MAX);
        let mut b_out = weights(&mut rng, VOCAB, WEIGHT_MAX);
        b_out[END as usize] += end_bias as f32 / WEIGHT_SCALE;
        let sigmoid = table(|x| 1.0 / (1.0 + (-x).exp()));
        let tanh = table(f64::tanh);
        Model { embedding, layers, w_out, b_out, sigmoid, tanh }
    }

    /// How many times over f32 could hold the largest sum the arithmetic can reach, exactly.
    ///
    /// Every value that enters a sum is a multiple of 2^-17 (a weight times an activation, or a
    /// bias); f32 holds such multiples exactly up to 2^24 of them, in magnitude 128. The largest
    /// sum is a gate's `x·W_ih row + b_ih + h·W_hh row + b_hh` (or a logit's) with every input
    /// at its bound 1: this returns 128 over it. Above 1, no sum anywhere is rounded. It also
    /// checks that every weight and activation lies on its grid (0 if one does not).
    pub fn exactness_margin(&self) -> f64 {
        let on_grid = |values: &[f32], scale: f32, max: f32| {
            values.iter().all(|&v| (v * scale).fract() == 0.0 && v.abs() <= max)
        };
        let weight_max = WEIGHT_MAX as f32 / WEIGHT_SCALE;
        let mut grids = on_grid(&self.embedding, ACT_SCALE, 1.0)
            && on_grid(&self.sigmoid, ACT_SCALE, 1.0)
            && on_grid(&self.tanh, ACT_SCALE, 1.0)
            && on_grid(&self.w_out, WEIGHT_SCALE, weight_max)
            && on_grid(&self.b_out, WEIGHT_SCALE, 64.0);
        let row_sum = |w: &[f32], b: &[f32], row: usize| -> f64 {
            w[row * HIDDEN..(row + 1) * HIDDEN].iter().map(|&v| f64::from(v.abs())).sum::<f64>()
                + f64::from(b[row].abs())
        };
        let mut largest: f64 = (0..VOCAB).map(|v| row_sum(&self.w_out, &self.b_out, v)).fold(0.0, f64::max);
        for layer in &self.layers {
            grids &= [&layer.w_ih, &layer.b_ih, &layer.w_hh, &layer.b_hh]
                .iter()
                .all(|values| on_grid(values, WEIGHT_SCALE, weight_max));
            for row in 0..3 * HIDDEN {
                let gate = row_sum(&layer.w_ih, &layer.b_ih, row) + row_sum(&layer.w_hh, &layer.b_hh, row);
                largest = largest.max(gate);
            }
        }
        if grids {
            128.0 / largest
        } else {
            0.0
        }
    }

    /// The start tokens of `batch` sequences of `seed` (never the end token).
    ///
    /// ```
    /// let starts = generation_loop::model::Model::start_tokens(64, 3);
    /// assert!(starts.iter().all(|&t| t != generation_loop::model::END));
    /// ```
    pub fn start_tokens(batch: usize, seed: u64) -> Vec<u32> {
        let mut rng = Rng::new(seed ^ 0x5747_4152_5453);
        (0..batch).map(|_| 1 + rng.below(VOCAB as u32 - 1)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_span_the_activations_and_sums_stay_exact() {
        let model = Model::generate(0x5eed, 0);
        assert!(model.exactness_margin() > 1.0, "{}", model.exactness_margin());
        assert_eq!(model.sigmoid[TABLE_HALF as usize], 0.5);
        assert_eq!((model.sigmoid[0], model.sigmoid[TABLE_LEN - 1]), (0.0, 1.0));
        assert_eq!(
            (model.tanh[0], model.tanh[TABLE_HALF as usize], model.tanh[TABLE_LEN - 1]),
            (-1.0, 0.0, 1.0)
        );
        // Monotone tables.
        assert!(model.sigmoid.windows(2).all(|w| w[0] <= w[1]));
        assert!(model.tanh.windows(2).all(|w| w[0] <= w[1]));
    }

    #[test]
    fn a_value_off_the_grid_is_caught() {
        let mut model = Model::generate(1, 0);
        model.layers[1].w_hh[5] += 1e-6;
        assert_eq!(model.exactness_margin(), 0.0);
    }
}
