//! The problem: least squares, min |X w - y|^2, with y = X w* exactly, so the solve must find
//! w*. The rows are split across the GPUs; every value comes from a seeded generator, so the
//! CPU reference sees the same numbers.

/// Sizes and stopping rule of one solve.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Config {
    /// Rows of X on each GPU.
    pub rows_per_gpu: usize,
    /// Columns of X (length of w), at most 32.
    pub features: usize,
    /// Learning rate: each pass takes `w -= rate * gradient / all rows`.
    pub rate: f64,
    /// Stop once |gradient / all rows| is at most this.
    pub tolerance: f64,
    /// Stop after this many passes whatever the gradient.
    pub max_passes: u32,
}

impl Config {
    /// The quick preset: small, for tests (a fraction of a second).
    pub fn quick() -> Config {
        Config { rows_per_gpu: 1 << 15, features: 8, rate: 1.5, tolerance: 1e-10, max_passes: 200 }
    }

    /// The full preset: 2^21 rows of 16 features per GPU.
    pub fn full() -> Config {
        Config { rows_per_gpu: 1 << 21, features: 16, rate: 1.5, tolerance: 1e-12, max_passes: 500 }
    }
}

/// The exact solution: w*_j = (j + 1) / features, minus a half for odd j.
pub fn solution(features: usize) -> Vec<f64> {
    (0..features).map(|j| (j + 1) as f64 / features as f64 - if j % 2 == 1 { 0.5 } else { 0.0 }).collect()
}

/// One GPU's rows: X column-major (`x[j * rows + i]`), entries uniform in [-1, 1) from a
/// generator seeded by the shard, and y = X w*.
pub struct Shard {
    /// X, column-major.
    pub x: Vec<f64>,
    /// y = X w*.
    pub y: Vec<f64>,
}

/// Shard `index` of a problem of `config`'s sizes.
pub fn shard(config: &Config, index: usize) -> Shard {
    let (rows, features) = (config.rows_per_gpu, config.features);
    let mut state = 0x9E37_79B9_7F4A_7C15u64 ^ (index as u64).wrapping_mul(0xD1B5_4A32_D192_ED03);
    let x: Vec<f64> = (0..rows * features).map(|_| uniform(&mut state)).collect();
    let w = solution(features);
    let y = (0..rows).map(|i| (0..features).map(|j| x[j * rows + i] * w[j]).sum()).collect();
    Shard { x, y }
}

/// A value uniform in [-1, 1) (splitmix64 step; 53 bits of mantissa).
fn uniform(state: &mut u64) -> f64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    (z >> 11) as f64 / (1u64 << 52) as f64 - 1.0
}

/// What a solve ends with.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// The weights found.
    pub w: Vec<f64>,
    /// Passes run.
    pub passes: u32,
}

/// The same solve on the CPU, in the same order of operations per pass (partial gradients
/// per shard, summed, one step): the reference the GPUs are checked against.
pub fn solve_on_cpu(config: &Config, shards: &[Shard]) -> Outcome {
    let (rows, features) = (config.rows_per_gpu, config.features);
    let total_rows = (rows * shards.len()) as f64;
    let step = config.rate / total_rows;
    let tol2 = (config.tolerance * total_rows).powi(2);
    let mut w = vec![0.0; features];
    let mut passes = 0;
    loop {
        let mut g = vec![0.0; features];
        for shard in shards {
            for i in 0..rows {
                let r = (0..features).map(|j| shard.x[j * rows + i] * w[j]).sum::<f64>() - shard.y[i];
                for (j, gj) in g.iter_mut().enumerate() {
                    *gj += r * shard.x[j * rows + i];
                }
            }
        }
        for (wj, gj) in w.iter_mut().zip(&g) {
            *wj -= step * gj;
        }
        passes += 1;
        let gnorm2: f64 = g.iter().map(|v| v * v).sum();
        if gnorm2 <= tol2 || passes >= config.max_passes {
            return Outcome { w, passes };
        }
    }
}

/// The largest difference between two vectors' entries.
pub fn max_difference(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0, f64::max)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cpu_solve_finds_the_solution() {
        let config = Config { rows_per_gpu: 512, ..Config::quick() };
        let shards: Vec<Shard> = (0..2).map(|i| shard(&config, i)).collect();
        let outcome = solve_on_cpu(&config, &shards);
        assert!(outcome.passes < config.max_passes, "{outcome:?}");
        assert!(max_difference(&outcome.w, &solution(config.features)) < 1e-8, "{outcome:?}");
    }

    #[test]
    fn shards_differ_and_values_stay_in_range() {
        let config = Config { rows_per_gpu: 64, ..Config::quick() };
        let (a, b) = (shard(&config, 0), shard(&config, 1));
        assert_ne!(a.x, b.x);
        assert!(a.x.iter().all(|v| (-1.0..1.0).contains(v)));
        assert_eq!(a.y.len(), 64);
    }
}
