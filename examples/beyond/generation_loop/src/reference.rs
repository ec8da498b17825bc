//! The CPU reference: the same generation, step by step, in plain f32 (Rust does not fuse
//! multiply-adds), with each dot product summed in index order. The sums are exact (see
//! [`crate::model`]), so any order gives the same bits; the one rounded product and add of the
//! candidate gate is written as the kernels write it.

use crate::model::{quantize, table_index, GruLayer, Model, END, HIDDEN, VOCAB};

/// Marks the slots of a sequence past its end in the kernels' token buffer.
pub const PAD: u32 = u32::MAX;

/// What one generation produced: per sequence, its tokens (the end token included when it
/// stopped on it) and each token's probability under the softmax.
#[derive(Debug, Clone, PartialEq)]
pub struct Generation {
    /// Tokens of each sequence, in order.
    pub tokens: Vec<Vec<u32>>,
    /// The softmax probability of each chosen token.
    pub probs: Vec<Vec<f32>>,
}

impl Generation {
    /// Steps the batch ran: the longest sequence.
    pub fn steps(&self) -> u32 {
        self.tokens.iter().map(|t| t.len() as u32).max().unwrap_or(0)
    }

    /// Tokens generated over all sequences.
    pub fn total_tokens(&self) -> u64 {
        self.tokens.iter().map(|t| t.len() as u64).sum()
    }

    /// The generation as the kernels store it (`[batch][max_len]`, [`PAD`] past each end).
    pub fn from_rows(tokens: &[u32], probs: &[f32], batch: usize, max_len: usize) -> Generation {
        let mut out = Generation { tokens: Vec::new(), probs: Vec::new() };
        for b in 0..batch {
            let row = &tokens[b * max_len..(b + 1) * max_len];
            let len = row.iter().position(|&t| t == PAD).unwrap_or(max_len);
            out.tokens.push(row.to_vec());
            out.tokens[b].truncate(len);
            out.probs.push(probs[b * max_len..b * max_len + len].to_vec());
        }
        out
    }

    /// The first difference from `want`: tokens exactly (and nothing written past a sequence's
    /// end), probabilities within `rel_tol` of each other.
    pub fn difference(&self, want: &Generation, rel_tol: f32) -> Option<String> {
        if self.tokens.len() != want.tokens.len() {
            return Some(format!("{} sequences, want {}", self.tokens.len(), want.tokens.len()));
        }
        for (b, (got, expected)) in self.tokens.iter().zip(&want.tokens).enumerate() {
            if let Some(t) = (0..got.len().max(expected.len())).find(|&t| got.get(t) != expected.get(t)) {
                let show = |v: Option<&u32>| v.map_or("nothing".to_string(), |t| t.to_string());
                return Some(format!(
                    "sequence {b}, step {t}: token {}, want {} ({} tokens, want {})",
                    show(got.get(t)),
                    show(expected.get(t)),
                    got.len(),
                    expected.len()
                ));
            }
        }
        for (b, (got, expected)) in self.probs.iter().zip(&want.probs).enumerate() {
            for (t, (&p, &q)) in got.iter().zip(expected).enumerate() {
                let close = (p - q).abs() <= rel_tol * q.abs(); // false for NaN too
                if !close {
                    return Some(format!("sequence {b}, step {t}: probability {p}, want {q}"));
                }
            }
        }
        None
    }
}

/// One GRU layer on one sequence: `h` becomes the new hidden state.
fn gru_layer(model: &Model, layer: &GruLayer, x: &[f32], h: &mut [f32]) {
    let row = |w: &[f32], b: &[f32], r: usize, v: &[f32]| -> f32 {
        let mut sum = 0.0f32;
        for (w, v) in w[r * HIDDEN..(r + 1) * HIDDEN].iter().zip(v) {
            sum += w * v;
        }
        sum + b[r]
    };
    let old = h.to_vec();
    for (j, h_j) in h.iter_mut().enumerate() {
        let gi = |g: usize| row(&layer.w_ih, &layer.b_ih, g * HIDDEN + j, x);
        let gh = |g: usize| row(&layer.w_hh, &layer.b_hh, g * HIDDEN + j, &old);
        let r = model.sigmoid[table_index(gi(0) + gh(0))];
        let z = model.sigmoid[table_index(gi(1) + gh(1))];
        let n = model.tanh[table_index(gi(2) + r * gh(2))];
        *h_j = quantize((1.0 - z) * n + z * old[j]);
    }
}

/// The first largest logit (lowest index on ties) and its softmax probability.
pub fn pick(logits: &[f32]) -> (u32, f32) {
    let mut best = 0;
    for (v, &l) in logits.iter().enumerate() {
        if l > logits[best] {
            best = v;
        }
    }
    let max = f64::from(logits[best]);
    let sum: f64 = logits.iter().map(|&l| (f64::from(l) - max).exp()).sum();
    (best as u32, (1.0 / sum) as f32)
}

/// Generates from `starts` (one sequence each) until every sequence has emitted [`END`] or
/// holds `max_len` tokens.
///
/// ```
/// use generation_loop::{model::Model, reference::generate};
/// let model = Model::generate(1, 0);
/// let run = generate(&model, &Model::start_tokens(3, 1), 20);
/// assert_eq!(run.tokens.len(), 3);
/// assert!(run.tokens.iter().all(|t| (1..=20).contains(&t.len())));
/// ```
pub fn generate(model: &Model, starts: &[u32], max_len: u32) -> Generation {
    let mut out = Generation { tokens: Vec::new(), probs: Vec::new() };
    for &start in starts {
        let mut hidden = vec![vec![0.0f32; HIDDEN]; model.layers.len()];
        let (mut tokens, mut probs) = (Vec::new(), Vec::new());
        let mut token = start;
        let mut logits = vec![0.0f32; VOCAB];
        while tokens.len() < max_len as usize {
            let mut x = model.embedding[token as usize * HIDDEN..(token as usize + 1) * HIDDEN].to_vec();
            for (layer, h) in model.layers.iter().zip(hidden.iter_mut()) {
                gru_layer(model, layer, &x, h);
                x.copy_from_slice(h);
            }
            for (v, logit) in logits.iter_mut().enumerate() {
                let mut sum = 0.0f32;
                for (w, x) in model.w_out[v * HIDDEN..(v + 1) * HIDDEN].iter().zip(&x) {
                    sum += w * x;
                }
                *logit = sum + model.b_out[v];
            }
            let (next, p) = pick(&logits);
            tokens.push(next);
            probs.push(p);
            token = next;
            if next == END {
                break;
            }
        }
        out.tokens.push(tokens);
        out.probs.push(probs);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ties_go_to_the_lowest_index_and_probabilities_sum_to_one() {
        let (token, p) = pick(&[0.5, 2.0, -1.0, 2.0]);
        assert_eq!(token, 1);
        let e = |x: f64| x.exp();
        let want = 1.0 / (e(-1.5) + 1.0 + e(-3.0) + 1.0);
        assert!((f64::from(p) - want).abs() < 1e-7);
    }

    #[test]
    fn rows_are_read_back_to_their_ends() {
        let tokens = [5, 0, PAD, 7, 8, 9];
        let probs = [0.5, 0.25, 0.0, 0.1, 0.2, 0.3];
        let run = Generation::from_rows(&tokens, &probs, 2, 3);
        assert_eq!(run.tokens, [vec![5, 0], vec![7, 8, 9]]);
        assert_eq!(run.probs[0], [0.5, 0.25]);
        assert_eq!(run.steps(), 3);
        assert_eq!(run.total_tokens(), 5);
        assert_eq!(run.difference(&run.clone(), 0.0), None);
        let mut other = run.clone();
        other.tokens[1][2] = 4;
        assert!(run.difference(&other, 0.0).unwrap().contains("sequence 1, step 2"));
        let mut shorter = run.clone();
        shorter.tokens[1].pop();
        assert!(run.difference(&shorter, 0.0).unwrap().contains("token 9, want nothing"));
        let mut off = run.clone();
        off.probs[0][1] = 0.3;
        assert!(run.difference(&off, 1e-3).unwrap().contains("probability"));
    }
}
