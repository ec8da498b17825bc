//! The model's shape: Llama-3.2-1B's ([`Config::llama_3_2_1b`]) or a tiny one of the same
//! architecture for tests and `--quick` ([`Config::tiny`]).

/// Dimensions of a query, key or value head (the kernels are written for 64).
pub const HEAD_DIM: usize = 64;

/// Positions per attention chunk (`LL_CHUNK` in the kernels): the cache length is a multiple.
pub const CHUNK: usize = 64;

/// Floats per attention partial (`LL_PARTIAL`): a chunk's 64 weighted value sums, its largest
/// score and its sum of exponentials, and two unused floats that keep each partial 16-byte
/// aligned for the combine's loads.
pub const PARTIAL: usize = HEAD_DIM + 4;

/// The longest row the norm-fused kernels take (`LL_MAX_HIDDEN`).
pub const MAX_HIDDEN: usize = 2048;

/// The longest MLP the down projection takes (`LL_MAX_MLP`).
pub const MAX_MLP: usize = 8192;

/// A Llama-3-style decoder's sizes and constants.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Config {
    /// Width of the residual stream.
    pub hidden: usize,
    /// Decoder layers.
    pub layers: usize,
    /// Query heads (of [`HEAD_DIM`]).
    pub q_heads: usize,
    /// Key/value heads (grouped-query attention: `q_heads / kv_heads` queries share one).
    pub kv_heads: usize,
    /// Width of the SwiGLU MLP.
    pub mlp: usize,
    /// Vocabulary size (the embedding is tied to the LM head).
    pub vocab: usize,
    /// KV-cache length in positions (the prompt plus the generated tokens must fit).
    pub max_seq: usize,
    /// RoPE base.
    pub rope_theta: f64,
    /// RMSNorm epsilon.
    pub eps: f32,
    /// Llama 3's RoPE frequency scaling (factor 32, low/high frequency factors 1 and 4,
    /// original context 8192), as Llama-3.2-1B's configuration has it.
    pub rope_scaling: bool,
}

impl Config {
    /// Llama-3.2-1B: hidden 2048, 16 layers, 32 query and 8 key/value heads of 64, MLP 8192,
    /// vocabulary 128,256, θ = 500,000 with Llama 3's frequency scaling, a cache of 512.
    pub fn llama_3_2_1b() -> Config {
        Config {
            hidden: 2048,
            layers: 16,
            q_heads: 32,
            kv_heads: 8,
            mlp: 8192,
            vocab: 128_256,
            max_seq: 512,
            rope_theta: 500_000.0,
            eps: 1e-5,
            rope_scaling: true,
        }
    }

    /// The same architecture, tiny: hidden 256, 2 layers, 4 query and 2 key/value heads, MLP
    /// 512, vocabulary 1000, a cache of 64.
    pub fn tiny() -> Config {
        Config {
            hidden: 256,
            layers: 2,
            q_heads: 4,
            kv_heads: 2,
            mlp: 512,
            vocab: 1000,
            max_seq: 64,
            ..Config::llama_3_2_1b()
        }
    }

    /// Why the kernels cannot run this shape, if they cannot.
    pub fn unsupported(&self) -> Option<String> {
        let q_dim = self.q_heads * HEAD_DIM;
        let problems = [
            (
                self.hidden == 0 || !self.hidden.is_multiple_of(256) || self.hidden > MAX_HIDDEN,
                "hidden: a multiple of 256, at most 2048",
            ),
            (
                !q_dim.is_multiple_of(256) || q_dim > MAX_HIDDEN,
                "q_heads * 64: a multiple of 256, at most 2048",
            ),
            (
                self.mlp == 0 || !self.mlp.is_multiple_of(256) || self.mlp > MAX_MLP,
                "mlp: a multiple of 256, at most 8192",
            ),
            (
                self.kv_heads == 0 || !self.q_heads.is_multiple_of(self.kv_heads),
                "q_heads: a multiple of kv_heads",
            ),
            (self.max_seq == 0 || !self.max_seq.is_multiple_of(CHUNK), "max_seq: a multiple of 64"),
            (self.vocab < 2 || self.layers == 0, "vocab >= 2 and layers >= 1"),
        ];
        problems.iter().find(|(bad, _)| *bad).map(|(_, rule)| rule.to_string())
    }

    /// Rows of the fused Q, K, V projection.
    pub fn qkv_rows(&self) -> usize {
        (self.q_heads + 2 * self.kv_heads) * HEAD_DIM
    }

    /// Weight elements of one layer (norms included).
    pub fn layer_elements(&self) -> usize {
        let h = self.hidden;
        2 * h + self.qkv_rows() * h + h * self.q_heads * HEAD_DIM + 3 * self.mlp * h
    }

    /// Weight elements in all (the tied embedding once).
    pub fn elements(&self) -> usize {
        self.layers * self.layer_elements() + self.vocab * self.hidden + self.hidden
    }

    /// Bytes of weights a step reads (bf16; the embedding once, as the LM head: the gather of
    /// one row is left out).
    pub fn weight_bytes(&self) -> f64 {
        2.0 * self.elements() as f64
    }

    /// Bytes of KV cache a step at position `pos` reads (bf16 keys and values of positions
    /// 0..=pos, every layer and key/value head).
    pub fn cache_bytes(&self, pos: usize) -> f64 {
        2.0 * 2.0 * (self.layers * self.kv_heads * HEAD_DIM * (pos + 1)) as f64
    }

    /// RoPE's inverse frequencies, one per rotated pair (32), with Llama 3's scaling when
    /// [`Config::rope_scaling`]: computed in f64, rounded to f32 (as the twin does).
    pub fn inv_freq(&self) -> Vec<f32> {
        let half = HEAD_DIM / 2;
        (0..half)
            .map(|i| {
                let f = 1.0 / self.rope_theta.powf((2 * i) as f64 / HEAD_DIM as f64);
                if self.rope_scaling {
                    llama3_scale(f) as f32
                } else {
                    f as f32
                }
            })
            .collect()
    }
}

/// Llama 3's frequency scaling of one inverse frequency (factor 32, low_freq_factor 1,
/// high_freq_factor 4, original_max_position_embeddings 8192), as in the reference code.
fn llama3_scale(freq: f64) -> f64 {
    let (factor, low, high, original) = (32.0, 1.0, 4.0, 8192.0);
    let wavelen = 2.0 * std::f64::consts::PI / freq;
    let (low_wavelen, high_wavelen) = (original / low, original / high);
    if wavelen < high_wavelen {
        freq
    } else if wavelen > low_wavelen {
        freq / factor
    } else {
        let smooth = (original / wavelen - low) / (high - low);
        (1.0 - smooth) * freq / factor + smooth * freq
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn llama_3_2_1b_has_its_published_size() {
        let c = Config::llama_3_2_1b();
        // 1.236 billion parameters with the tied embedding counted once.
        assert_eq!(c.elements(), 1_235_814_400);
        assert!((c.weight_bytes() / 1e9 - 2.47).abs() < 0.01, "{}", c.weight_bytes());
        assert_eq!(c.unsupported(), None);
        assert_eq!(Config::tiny().unsupported(), None);
    }

    #[test]
    fn rope_scaling_keeps_high_frequencies_and_divides_low_ones() {
        let c = Config::llama_3_2_1b();
        let f = c.inv_freq();
        assert_eq!(f.len(), 32);
        assert_eq!(f[0], 1.0);
        let unscaled = 1.0 / 500_000f64.powf(62.0 / 64.0);
        assert!((f64::from(f[31]) - unscaled / 32.0).abs() < 1e-12, "{}", f[31]);
        assert!(f.windows(2).all(|w| w[1] < w[0]));
        assert!(Config { hidden: 300, ..c }.unsupported().is_some());
    }
}
