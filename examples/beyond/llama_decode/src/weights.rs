//! The weights: every tensor's id, shape and scale, and the integer hash that gives element `i`
//! of tensor `t` its value from the seed. The GPU generates them with the same hash
//! (`ll_init_weights`), the CPU reference here ([`Tensor::generate`]), the PyTorch twin with
//! torch int64 operations: a 32-bit state, every product taken modulo 2^32 (the twin masks
//! with `0xFFFFFFFF` after each multiply), constants below 2^31, so that no intermediate
//! reaches 2^63.
//!
//! A value is a centred 24-bit integer from the hash times a power of two (exact in f32),
//! plus 1 for norm weights, rounded to bf16 (nearest, ties to even). Projections are uniform in
//! ±2^-e with 2^e ≈ sqrt(fan_in) (rounded up), the output projections (wo, down) 8 times wider
//! ([`OUTPUT_WIDENING`]) and the embedding 4 times wider ([`EMBEDDING_WIDENING`]); norm weights
//! in [7/8, 9/8).

use crate::config::{Config, HEAD_DIM};

/// The hash's mixing function (both multiplies wrap modulo 2^32).
///
/// ```
/// assert_eq!(llama_decode::weights::mix(0), 0);
/// assert_eq!(llama_decode::weights::mix(1), 0x1d89_5f4e);
/// ```
pub fn mix(mut x: u32) -> u32 {
    x ^= x >> 16;
    x = x.wrapping_mul(0x7feb_352d);
    x ^= x >> 15;
    x = x.wrapping_mul(0x68e3_1da5);
    x ^= x >> 16;
    x
}

/// The hash of element `index` of tensor `tensor` under `seed`.
pub fn hash(seed: u32, tensor: u32, index: u32) -> u32 {
    let s = mix(seed ^ tensor.wrapping_mul(0x27d4_eb2f));
    mix(s ^ mix(index.wrapping_add(0x1656_67b1)))
}

/// The 32-bit seed of the hash from the program's 64-bit one (low word xor high word).
pub fn seed32(seed: u64) -> u32 {
    (seed as u32) ^ ((seed >> 32) as u32)
}

/// f32 to bf16 bits, round to nearest, ties to even (finite values).
///
/// ```
/// use llama_decode::weights::{bf16, f32_of};
/// assert_eq!(bf16(1.0), 0x3f80);
/// assert_eq!(f32_of(bf16(1.0 + 1.0 / 256.0)), 1.0); // a tie: to even
/// assert_eq!(f32_of(bf16(1.0 + 3.0 / 256.0)), 1.0 + 4.0 / 256.0);
/// ```
pub fn bf16(v: f32) -> u16 {
    let bits = v.to_bits();
    ((bits.wrapping_add(0x7fff + ((bits >> 16) & 1))) >> 16) as u16
}

/// bf16 bits to f32 (exact).
pub fn f32_of(b: u16) -> f32 {
    f32::from_bits(u32::from(b) << 16)
}

/// The exponent e of a projection's scale 2^-e for `fan_in` inputs: ceil(log2(fan_in) / 2).
///
/// ```
/// assert_eq!(llama_decode::weights::scale_exponent(2048), 6);
/// assert_eq!(llama_decode::weights::scale_exponent(8192), 7);
/// assert_eq!(llama_decode::weights::scale_exponent(256), 4);
/// ```
pub fn scale_exponent(fan_in: usize) -> u32 {
    let bits = usize::BITS - (fan_in.max(2) - 1).leading_zeros();
    bits.div_ceil(2)
}

/// What a tensor is in the layer (its id is `16 + 16 * layer + kind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// The attention's RMSNorm weight.
    AttnNorm = 0,
    /// Query projection.
    Wq = 1,
    /// Key projection.
    Wk = 2,
    /// Value projection.
    Wv = 3,
    /// Output projection.
    Wo = 4,
    /// The MLP's RMSNorm weight.
    MlpNorm = 5,
    /// Gate projection.
    Gate = 6,
    /// Up projection.
    Up = 7,
    /// Down projection.
    Down = 8,
}

/// The embedding is 2^2 times wider than a projection of its fan-in: the logits spread over a
/// few units.
pub const EMBEDDING_WIDENING: u32 = 2;

/// The layers' output projections (wo, down) are 2^3 times wider than their fan-in alone would
/// make them: the layers' updates then outweigh the token's own embedding in the residual
/// stream. With the embedding tied to the LM head, a residual dominated by the input token's
/// embedding makes that token the largest logit again and again (a generation of one repeated
/// token); with these, the tokens vary.
pub const OUTPUT_WIDENING: u32 = 3;

/// The embedding's id (tied: also the LM head).
pub const EMBEDDING_ID: u32 = 1;
/// The final RMSNorm weight's id.
pub const FINAL_NORM_ID: u32 = 2;

/// One tensor: its id, its element count, and how its values are made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tensor {
    /// Its id in the hash.
    pub id: u32,
    /// Elements (rows times columns, row-major).
    pub len: usize,
    /// Values are a centred 24-bit integer times 2^-shift (23 + the scale's exponent).
    pub shift: u32,
    /// Whether 1 is added (norm weights).
    pub one: bool,
}

impl Tensor {
    fn projection(id: u32, rows: usize, fan_in: usize) -> Tensor {
        Tensor { id, len: rows * fan_in, shift: 23 + scale_exponent(fan_in), one: false }
    }

    fn norm(id: u32, len: usize) -> Tensor {
        Tensor { id, len, shift: 23 + 3, one: true }
    }

    /// `tensor` with values 2^`bits` times wider.
    fn widened(tensor: Tensor, bits: u32) -> Tensor {
        Tensor { shift: tensor.shift - bits, ..tensor }
    }

    /// The tied embedding, `[vocab][hidden]`.
    pub fn embedding(config: &Config) -> Tensor {
        Tensor {
            shift: 23 + scale_exponent(config.hidden) - 2,
            ..Tensor::projection(EMBEDDING_ID, config.vocab, config.hidden)
        }
    }

    /// The final norm's weight.
    pub fn final_norm(config: &Config) -> Tensor {
        Tensor::norm(FINAL_NORM_ID, config.hidden)
    }

    /// Tensor `kind` of layer `layer`: norms `[hidden]`, wq `[q_heads * 64][hidden]`, wk and wv
    /// `[kv_heads * 64][hidden]`, wo `[hidden][q_heads * 64]`, gate and up `[mlp][hidden]`,
    /// down `[hidden][mlp]`.
    pub fn layer(config: &Config, layer: usize, kind: Kind) -> Tensor {
        let id = 16 + 16 * layer as u32 + kind as u32;
        let (h, q, kv) = (config.hidden, config.q_heads * HEAD_DIM, config.kv_heads * HEAD_DIM);
        match kind {
            Kind::AttnNorm | Kind::MlpNorm => Tensor::norm(id, h),
            Kind::Wq => Tensor::projection(id, q, h),
            Kind::Wk | Kind::Wv => Tensor::projection(id, kv, h),
            Kind::Wo => Tensor::widened(Tensor::projection(id, h, q), OUTPUT_WIDENING),
            Kind::Gate | Kind::Up => Tensor::projection(id, config.mlp, h),
            Kind::Down => Tensor::widened(Tensor::projection(id, h, config.mlp), OUTPUT_WIDENING),
        }
    }

    /// Element `index`'s value (bf16 bits).
    pub fn value(&self, seed: u32, index: u32) -> u16 {
        let centred = (hash(seed, self.id, index) >> 8) as i32 - (1 << 23);
        let mut v = centred as f32 * 2f32.powi(-(self.shift as i32));
        if self.one {
            v += 1.0;
        }
        bf16(v)
    }

    /// Every element (bf16 bits), on the CPU.
    pub fn generate(&self, seed: u32) -> Vec<u16> {
        (0..self.len as u32).map(|i| self.value(seed, i)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_spread_within_their_scale_and_norms_near_one() {
        let c = Config::tiny();
        let wq = Tensor::layer(&c, 0, Kind::Wq).generate(7);
        let scale = 2f32.powi(-(scale_exponent(c.hidden) as i32));
        let values: Vec<f32> = wq.iter().map(|&b| f32_of(b)).collect();
        assert!(values.iter().all(|v| v.abs() <= scale), "within ±2^-e");
        let mean = values.iter().sum::<f32>() / values.len() as f32;
        let var = values.iter().map(|v| v * v).sum::<f32>() / values.len() as f32;
        assert!(mean.abs() < 0.01 * scale, "{mean}");
        // Uniform in ±s: variance s^2 / 3.
        assert!((var / (scale * scale / 3.0) - 1.0).abs() < 0.02, "{var}");
        let norm: Vec<f32> =
            Tensor::layer(&c, 1, Kind::MlpNorm).generate(7).iter().map(|&b| f32_of(b)).collect();
        assert!(norm.iter().all(|v| (0.875..=1.125).contains(v)), "{norm:?}");
        // Different tensors and seeds differ.
        assert_ne!(Tensor::layer(&c, 0, Kind::Wk).generate(7)[..64], wq[..64]);
        assert_ne!(Tensor::layer(&c, 0, Kind::Wq).generate(8)[..64], wq[..64]);
    }

    #[test]
    fn hash_values_the_twin_checks() {
        // torch_twin.py --self-test recomputes these with torch int64 operations.
        assert_eq!(hash(0x5eed, 1, 0), 0x81e1_cc3c);
        assert_eq!(hash(0x5eed, 16, 12345), 0x9dd9_9000);
        assert_eq!(seed32(0x1_0000_5eed), 0x5eec);
    }

    #[test]
    fn every_id_is_distinct() {
        let c = Config::llama_3_2_1b();
        let kinds = [
            Kind::AttnNorm,
            Kind::Wq,
            Kind::Wk,
            Kind::Wv,
            Kind::Wo,
            Kind::MlpNorm,
            Kind::Gate,
            Kind::Up,
            Kind::Down,
        ];
        let mut ids: Vec<u32> =
            (0..c.layers).flat_map(|l| kinds.map(|k| Tensor::layer(&c, l, k).id)).collect();
        ids.extend([EMBEDDING_ID, FINAL_NORM_ID]);
        let n = ids.len();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), n);
    }
}
