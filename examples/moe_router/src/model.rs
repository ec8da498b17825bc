//! The CPU model of one routing step: seeded inputs, the routing, every expert's output and
//! the combined output, in the same wrapping integer arithmetic as `kernels/moe.cu`.

use chapter_common::Rng;

/// The seeded inputs of a step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inputs {
    /// Tokens.
    pub tokens: u32,
    /// Features per token.
    pub hidden: u32,
    /// Experts.
    pub experts: u32,
    /// Experts per token (1 or 2).
    pub top_k: u32,
    /// `x[t * hidden + j]`: token features in `1..256` (never zero).
    pub x: Vec<u32>,
    /// `wg[e * hidden + j]`: gate weights in `1..256`.
    pub wg: Vec<u32>,
    /// `bias[e]`: gate biases, which skew the routing (some experts get more tokens).
    pub bias: Vec<u32>,
    /// `w[(e * hidden + i) * hidden + j]`: expert weights (any 32-bit value).
    pub w: Vec<u32>,
}

impl Inputs {
    /// Seeded inputs for `tokens` tokens of `hidden` features and `experts` experts.
    pub fn new(seed: u64, tokens: u32, hidden: u32, experts: u32, top_k: u32) -> Inputs {
        let mut rng = Rng::new(seed);
        let (t, h, e) = (tokens as usize, hidden as usize, experts as usize);
        let mut small = |n: usize| (0..n).map(|_| 1 + rng.below(255)).collect::<Vec<u32>>();
        let x = small(t * h);
        let wg = small(e * h);
        // Up to a quarter of a typical score (hidden * 128 * 128): a visible skew.
        let bias = (0..e).map(|_| rng.below(hidden * 4096)).collect();
        let w = (0..e * h * h).map(|_| rng.next_u64() as u32).collect();
        Inputs { tokens, hidden, experts, top_k, x, wg, bias, w }
    }

    /// Gate score of token `t` for expert `e`.
    pub fn score(&self, t: usize, e: usize) -> u32 {
        let h = self.hidden as usize;
        let row = &self.x[t * h..(t + 1) * h];
        let gate = &self.wg[e * h..(e + 1) * h];
        row.iter().zip(gate).fold(self.bias[e], |acc, (&a, &b)| acc.wrapping_add(a.wrapping_mul(b)))
    }

    /// Token `t`'s picks: its `top_k` experts by score, ties to the lower index, best first.
    pub fn picks(&self, t: usize) -> Vec<(u32, u32)> {
        let mut ranked: Vec<(u32, u32)> = (0..self.experts).map(|e| (e, self.score(t, e as usize))).collect();
        ranked.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        ranked.truncate(self.top_k as usize);
        ranked
    }
}

/// What `kernels/moe.cu`'s `moe_mix` does to an expert's sum.
///
/// ```
/// assert_eq!(moe_router::model::mix(0), 0);
/// assert_ne!(moe_router::model::mix(1), 1);
/// ```
pub fn mix(mut x: u32) -> u32 {
    x ^= x >> 15;
    x = x.wrapping_mul(0x2c1b_3c6d);
    x ^ (x >> 12)
}

/// What one step must produce.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expected {
    /// Tokens routed to each expert (pairs, with top-2: a token counts once per expert).
    pub counts: Vec<u32>,
    /// Experts that received at least one token: the expert graphs a step launches.
    pub busy_experts: u32,
    /// `y[t * hidden + i]`: the combined output.
    pub y: Vec<u32>,
}

/// Routes every token, runs every expert on its tokens and combines, on the CPU.
pub fn expected(inputs: &Inputs) -> Expected {
    let (h, k) = (inputs.hidden as usize, inputs.top_k as usize);
    let mut counts = vec![0u32; inputs.experts as usize];
    let mut y = vec![0u32; inputs.tokens as usize * h];
    for t in 0..inputs.tokens as usize {
        let xt = &inputs.x[t * h..(t + 1) * h];
        for &(e, gate) in inputs.picks(t).iter().take(k) {
            counts[e as usize] += 1;
            for i in 0..h {
                let wr = &inputs.w[(e as usize * h + i) * h..(e as usize * h + i + 1) * h];
                let acc = wr.iter().zip(xt).fold(e, |acc, (&a, &b)| acc.wrapping_add(a.wrapping_mul(b)));
                y[t * h + i] = y[t * h + i].wrapping_add(gate.wrapping_mul(mix(acc)));
            }
        }
    }
    let busy_experts = counts.iter().filter(|&&c| c > 0).count() as u32;
    Expected { counts, busy_experts, y }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inputs_are_seeded_and_never_all_zero() {
        let a = Inputs::new(1, 64, 8, 4, 2);
        assert_eq!(a, Inputs::new(1, 64, 8, 4, 2));
        assert_ne!(a.x, Inputs::new(2, 64, 8, 4, 2).x);
        assert!(a.x.iter().all(|&v| (1..256).contains(&v)));
        assert!(a.w.iter().any(|&v| v != 0));
    }

    #[test]
    fn picks_are_the_best_scores_with_ties_to_the_lower_index() {
        let mut inputs = Inputs::new(3, 4, 2, 4, 2);
        inputs.wg = vec![0; 8];
        inputs.bias = vec![5, 9, 9, 1];
        assert_eq!(inputs.picks(0), [(1, 9), (2, 9)]);
        inputs.top_k = 1;
        inputs.bias = vec![7, 7, 7, 7];
        assert_eq!(inputs.picks(0), [(0, 7)]);
    }

    #[test]
    fn every_token_is_counted_top_k_times() {
        for top_k in [1, 2] {
            let inputs = Inputs::new(9, 500, 16, 8, top_k);
            let want = expected(&inputs);
            assert_eq!(want.counts.iter().sum::<u32>(), 500 * top_k);
            assert!(want.busy_experts >= 2, "the routing should spread: {:?}", want.counts);
            assert!(want.y.iter().any(|&v| v != 0));
        }
    }
}
