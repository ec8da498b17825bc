//! The CPU reference: each operation of the step as the kernels define it (fp32 values, bf16
//! weights and cache, sums in f64), and the whole model built from them, for the tiny config
//! (the tests) and the first steps of any.
//!
//! The kernels sum in other orders (fp32, lane-strided); the tests allow for that with
//! [`LOGIT_TOLERANCE`] on logits, and compare tokens exactly where the reference's margin
//! between its two best logits exceeds the tolerance.

use crate::config::{Config, HEAD_DIM};
use crate::weights::{f32_of, seed32, Kind, Tensor};

/// The largest absolute difference allowed between a kernel's logits and the reference's at
/// the tiny config (fp32 sums in different orders over bf16 weights, rsqrt and exp of the
/// device's libraries).
pub const LOGIT_TOLERANCE: f32 = 2e-3;

/// `w[rows][cols] . x` with f64 sums (bf16 weights).
pub fn gemv(w: &[u16], x: &[f32]) -> Vec<f32> {
    w.chunks_exact(x.len())
        .map(|row| row.iter().zip(x).map(|(&w, &x)| f64::from(f32_of(w)) * f64::from(x)).sum::<f64>() as f32)
        .collect()
}

/// RMSNorm: `x * 1/sqrt(mean(x^2) + eps) * w`.
pub fn rms_norm(x: &[f32], w: &[u16], eps: f32) -> Vec<f32> {
    let mean = x.iter().map(|&v| f64::from(v) * f64::from(v)).sum::<f64>() / x.len() as f64;
    let r = (1.0 / (mean + f64::from(eps)).sqrt()) as f32;
    x.iter().zip(w).map(|(&v, &w)| v * r * f32_of(w)).collect()
}

/// Rotates one head (64 values) in place at `pos`: dimension j with j + 32 by the angle
/// `pos * inv_freq[j]` (rotate-half pairs, the angle's product rounded to f32).
pub fn rope(head: &mut [f32], pos: usize, inv_freq: &[f32]) {
    let half = HEAD_DIM / 2;
    for j in 0..half {
        let (s, c) = (pos as f32 * inv_freq[j]).sin_cos();
        let (a, b) = (head[j], head[j + half]);
        head[j] = a * c - b * s;
        head[j + half] = b * c + a * s;
    }
}

/// Attention of each query head over positions 0..=pos of its key/value head: softmax(q . k /
/// 8) . v. `q`: `[q_heads * 64]`; the caches: `[kv_heads][max_seq][64]` bf16.
pub fn attention(q: &[f32], k: &[u16], v: &[u16], pos: usize, kv_heads: usize, max_seq: usize) -> Vec<f32> {
    let q_heads = q.len() / HEAD_DIM;
    let group = q_heads / kv_heads;
    let mut out = vec![0.0f32; q.len()];
    for h in 0..q_heads {
        let base = (h / group) * max_seq * HEAD_DIM;
        let qh = &q[h * HEAD_DIM..(h + 1) * HEAD_DIM];
        let scores: Vec<f64> = (0..=pos)
            .map(|t| {
                let kt = &k[base + t * HEAD_DIM..base + (t + 1) * HEAD_DIM];
                qh.iter().zip(kt).map(|(&a, &b)| f64::from(a) * f64::from(f32_of(b))).sum::<f64>() * 0.125
            })
            .collect();
        let m = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let p: Vec<f64> = scores.iter().map(|s| (s - m).exp()).collect();
        let sum: f64 = p.iter().sum();
        for d in 0..HEAD_DIM {
            let acc: f64 = (0..=pos).map(|t| p[t] * f64::from(f32_of(v[base + t * HEAD_DIM + d]))).sum();
            out[h * HEAD_DIM + d] = (acc / sum) as f32;
        }
    }
    out
}

/// SwiGLU: `silu(g) * u`.
pub fn swiglu(g: f32, u: f32) -> f32 {
    g / (1.0 + (-g).exp()) * u
}

/// The index of the first largest value.
///
/// ```
/// assert_eq!(llama_decode::reference::argmax(&[1.0, 3.0, 2.0, 3.0]), 1);
/// ```
pub fn argmax(values: &[f32]) -> usize {
    let mut best = 0;
    for (i, &v) in values.iter().enumerate() {
        if v > values[best] {
            best = i;
        }
    }
    best
}

/// The best logit minus the second best (how far a token is from a tie).
pub fn margin(logits: &[f32]) -> f32 {
    let best = argmax(logits);
    let second =
        logits.iter().enumerate().filter(|&(i, _)| i != best).map(|(_, &v)| v).fold(f32::MIN, f32::max);
    logits[best] - second
}

/// One layer's weights (bf16 bits).
#[derive(Debug, Clone)]
pub struct Layer {
    /// Attention norm `[hidden]`.
    pub attn_norm: Vec<u16>,
    /// wq, wk, wv stacked: `[(q_heads + 2 kv_heads) * 64][hidden]`.
    pub wqkv: Vec<u16>,
    /// `[hidden][q_heads * 64]`.
    pub wo: Vec<u16>,
    /// MLP norm `[hidden]`.
    pub mlp_norm: Vec<u16>,
    /// `[mlp][hidden]`.
    pub gate: Vec<u16>,
    /// `[mlp][hidden]`.
    pub up: Vec<u16>,
    /// `[hidden][mlp]`.
    pub down: Vec<u16>,
}

/// The model's weights on the CPU (generated from the seed with the weights' hash).
#[derive(Debug, Clone)]
pub struct Weights {
    /// The shape.
    pub config: Config,
    /// `[vocab][hidden]`, tied to the LM head.
    pub embedding: Vec<u16>,
    /// Per layer.
    pub layers: Vec<Layer>,
    /// The final norm `[hidden]`.
    pub final_norm: Vec<u16>,
}

impl Weights {
    /// Every tensor of `config` from `seed` (slow for the full model: use it at small sizes).
    pub fn generate(config: &Config, seed: u64) -> Weights {
        let s = seed32(seed);
        let layer = |l| {
            let t = |kind| Tensor::layer(config, l, kind).generate(s);
            let mut wqkv = t(Kind::Wq);
            wqkv.extend(t(Kind::Wk));
            wqkv.extend(t(Kind::Wv));
            Layer {
                attn_norm: t(Kind::AttnNorm),
                wqkv,
                wo: t(Kind::Wo),
                mlp_norm: t(Kind::MlpNorm),
                gate: t(Kind::Gate),
                up: t(Kind::Up),
                down: t(Kind::Down),
            }
        };
        Weights {
            config: *config,
            embedding: Tensor::embedding(config).generate(s),
            layers: (0..config.layers).map(layer).collect(),
            final_norm: Tensor::final_norm(config).generate(s),
        }
    }
}

/// The reference decoder: its weights, its KV cache and its residual stream.
#[derive(Debug, Clone)]
pub struct Reference {
    weights: Weights,
    inv_freq: Vec<f32>,
    /// Per layer: keys, then values, `[kv_heads][max_seq][64]` bf16.
    cache: Vec<(Vec<u16>, Vec<u16>)>,
}

/// What [`Reference::generate`] produced.
#[derive(Debug, Clone, PartialEq)]
pub struct Generated {
    /// The generated tokens (after the prompt).
    pub tokens: Vec<u32>,
    /// The logits of each decode step (the first produced the first generated token).
    pub logits: Vec<Vec<f32>>,
}

impl Reference {
    /// A fresh decoder over `weights`.
    pub fn new(weights: Weights) -> Reference {
        let c = weights.config;
        let size = c.kv_heads * c.max_seq * HEAD_DIM;
        Reference { inv_freq: c.inv_freq(), cache: vec![(vec![0; size], vec![0; size]); c.layers], weights }
    }

    /// One step: the logits after `token` at position `pos` (its keys and values cached).
    pub fn step(&mut self, token: u32, pos: usize) -> Vec<f32> {
        let c = self.weights.config;
        let h = c.hidden;
        let row = token as usize * h;
        let mut x: Vec<f32> = self.weights.embedding[row..row + h].iter().map(|&b| f32_of(b)).collect();
        let q_dim = c.q_heads * HEAD_DIM;
        let kv_dim = c.kv_heads * HEAD_DIM;
        for (layer, (k_cache, v_cache)) in self.weights.layers.iter().zip(&mut self.cache) {
            let n = rms_norm(&x, &layer.attn_norm, c.eps);
            let mut qkv = gemv(&layer.wqkv, &n);
            for head in qkv[..q_dim + kv_dim].chunks_exact_mut(HEAD_DIM) {
                rope(head, pos, &self.inv_freq);
            }
            for g in 0..c.kv_heads {
                let at = (g * c.max_seq + pos) * HEAD_DIM;
                for d in 0..HEAD_DIM {
                    k_cache[at + d] = crate::weights::bf16(qkv[q_dim + g * HEAD_DIM + d]);
                    v_cache[at + d] = crate::weights::bf16(qkv[q_dim + kv_dim + g * HEAD_DIM + d]);
                }
            }
            let att = attention(&qkv[..q_dim], k_cache, v_cache, pos, c.kv_heads, c.max_seq);
            for (x, o) in x.iter_mut().zip(gemv(&layer.wo, &att)) {
                *x += o;
            }
            let n = rms_norm(&x, &layer.mlp_norm, c.eps);
            let hidden: Vec<f32> = gemv(&layer.gate, &n)
                .into_iter()
                .zip(gemv(&layer.up, &n))
                .map(|(g, u)| swiglu(g, u))
                .collect();
            for (x, d) in x.iter_mut().zip(gemv(&layer.down, &hidden)) {
                *x += d;
            }
        }
        let n = rms_norm(&x, &self.weights.final_norm, c.eps);
        gemv(&self.weights.embedding, &n)
    }

    /// Feeds `prompt` token by token, then generates `tokens` tokens greedily.
    pub fn generate(&mut self, prompt: &[u32], tokens: usize) -> Generated {
        let mut out = Generated { tokens: Vec::new(), logits: Vec::new() };
        for (pos, &token) in prompt[..prompt.len() - 1].iter().enumerate() {
            self.step(token, pos);
        }
        let mut token = *prompt.last().expect("a prompt of at least one token");
        for i in 0..tokens {
            let logits = self.step(token, prompt.len() - 1 + i);
            token = argmax(&logits) as u32;
            out.tokens.push(token);
            out.logits.push(logits);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiny_model_generates_varied_tokens_with_sane_logits() {
        let config = Config::tiny();
        let mut model = Reference::new(Weights::generate(&config, 0x5eed));
        let prompt = crate::prompt(&config, 0x5eed);
        let out = model.generate(&prompt, 8);
        assert_eq!(out.tokens.len(), 8);
        assert!(out.tokens.iter().all(|&t| (t as usize) < config.vocab));
        let first = &out.logits[0];
        let spread =
            first.iter().copied().fold(f32::MIN, f32::max) - first.iter().copied().fold(f32::MAX, f32::min);
        assert!(first.iter().all(|v| v.is_finite()) && spread > 1.0 && spread < 100.0, "spread {spread}");
        // Not one token over and over (what a residual dominated by the input token's own
        // embedding gives with a tied LM head; see weights::OUTPUT_WIDENING).
        let longer = Reference::new(Weights::generate(&config, 0x5eed)).generate(&prompt, 32);
        let mut distinct = longer.tokens.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert!(distinct.len() >= 3, "{:?}", longer.tokens);
        // A fresh model repeats the generation exactly.
        let again = Reference::new(Weights::generate(&config, 0x5eed)).generate(&prompt, 8);
        assert_eq!(again, out);
    }

    #[test]
    fn attention_of_one_position_is_its_value() {
        let q = vec![0.5f32; 2 * HEAD_DIM];
        let k: Vec<u16> = (0..HEAD_DIM).map(|i| crate::weights::bf16(i as f32 / 64.0)).collect();
        let v: Vec<u16> = (0..HEAD_DIM).map(|i| crate::weights::bf16(i as f32)).collect();
        let out = attention(&q, &k, &v, 0, 1, 1);
        assert_eq!(out[..HEAD_DIM], out[HEAD_DIM..]);
        assert!(out.iter().take(HEAD_DIM).enumerate().all(|(i, &o)| (o - i as f32).abs() < 1e-5));
        assert_eq!(argmax(&[2.0, 2.0]), 0);
        assert_eq!(margin(&[1.0, 3.0, 2.5]), 0.5);
    }
}
