//! The work every part launches (`se_work`), its CPU reference, and the seeded inputs.

use chapter_common::Rng;
use cuda_graph::kernel::LaunchConfig;
use cuda_graph::{DevicePtr, Result, Stream};

// SAFETY: each kernel below reads and writes its pointers only below the counts it is given
// (see kernels/*.cu); the declarations are private to this crate, whose launches pass counts
// no larger than the buffers they point into.
cuda_graph::kernels! {
    /// `out[i] = mix(in[i], rounds, salt)` for `i < n`, one element per thread.
    pub unsafe fn se_work(input: DevicePtr<u32>, output: DevicePtr<u32>, n: u32, rounds: u32, salt: u32);
}

/// Threads per block of every launch.
pub const THREADS_PER_BLOCK: u32 = 256;

/// Inputs are drawn from `0..VALUES`, so the expected output of any element is one of
/// `VALUES` precomputed numbers ([`Table`]), whatever the array size.
pub const VALUES: u32 = 4096;

/// What `se_work` computes for one element: `rounds` LCG steps and xorshifts from the value
/// and the salt ([`chapter_common::lcg_rounds`]; the kernel calls its CUDA twin).
///
/// ```
/// use streams_events::mix;
/// assert_eq!(mix(3, 0, 5), 3u32.wrapping_mul(0x9e37_79b9) ^ 5);
/// assert_ne!(mix(3, 7, 5), mix(3, 8, 5));
/// ```
pub fn mix(value: u32, rounds: u32, salt: u32) -> u32 {
    chapter_common::lcg_rounds(value, rounds, salt)
}

/// The expected output for every input value, for one `(rounds, salt)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Table {
    /// Rounds of [`mix`].
    pub rounds: u32,
    /// Salt of [`mix`].
    pub salt: u32,
    values: Vec<u32>,
}

impl Table {
    /// Computes `mix(v, rounds, salt)` for every `v < VALUES`, spread over the CPU's threads.
    pub fn new(rounds: u32, salt: u32) -> Table {
        let threads = std::thread::available_parallelism().map_or(4, |n| n.get()).clamp(1, 64);
        let per = (VALUES as usize).div_ceil(threads);
        let mut values = vec![0u32; VALUES as usize];
        std::thread::scope(|scope| {
            for (k, part) in values.chunks_mut(per).enumerate() {
                scope.spawn(move || {
                    for (j, out) in part.iter_mut().enumerate() {
                        *out = mix((k * per + j) as u32, rounds, salt);
                    }
                });
            }
        });
        Table { rounds, salt, values }
    }

    /// The expected output for input `value` (< `VALUES`).
    pub fn expect(&self, value: u32) -> u32 {
        self.values[value as usize]
    }

    /// The first element of `output` that is not the expected result of the same element of
    /// `input`, with what was found and what was expected.
    pub fn first_mismatch(&self, input: &[u32], output: &[u32]) -> Option<(usize, u32, u32)> {
        if input.len() != output.len() {
            return Some((input.len().min(output.len()), output.len() as u32, input.len() as u32));
        }
        input
            .iter()
            .zip(output)
            .position(|(&i, &o)| self.expect(i) != o)
            .map(|k| (k, output[k], self.expect(input[k])))
    }
}

/// `len` seeded input values in `0..VALUES` (never all equal).
pub fn inputs(rng: &mut Rng, len: usize) -> Vec<u32> {
    rng.vec_below(len, VALUES)
}

/// The launch of `se_work` over `n` elements.
pub fn config(n: u32) -> LaunchConfig {
    LaunchConfig::for_elements(n, THREADS_PER_BLOCK)
}

/// Queues `se_work` over the `n` elements at `input` into `output` on `stream`.
pub fn launch(
    stream: &Stream, input: DevicePtr<u32>, output: DevicePtr<u32>, n: u32, rounds: u32, salt: u32,
) -> Result<()> {
    se_work().launch(stream, config(n), (input, output, n, rounds, salt))
}

/// Spins until `done()` says so (polling CUDA without yielding the thread, as a dispatcher
/// that must react within microseconds does).
pub fn spin_until(mut done: impl FnMut() -> Result<bool>) -> Result<()> {
    while !done()? {
        std::hint::spin_loop();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_equals_mix_for_every_value() {
        let table = Table::new(37, 0xabcd);
        for v in [0, 1, 17, VALUES / 2, VALUES - 1] {
            assert_eq!(table.expect(v), mix(v, 37, 0xabcd));
        }
        let input = [1, 2, 3];
        let mut output: Vec<u32> = input.iter().map(|&v| mix(v, 37, 0xabcd)).collect();
        assert_eq!(table.first_mismatch(&input, &output), None);
        output[2] ^= 1;
        assert_eq!(
            table.first_mismatch(&input, &output),
            Some((2, mix(3, 37, 0xabcd) ^ 1, mix(3, 37, 0xabcd)))
        );
        assert!(table.first_mismatch(&input, &output[..2]).is_some());
    }

    #[test]
    fn distinct_values_give_distinct_outputs_mostly() {
        // A misplaced chunk must show: outputs must depend on the value.
        let table = Table::new(100, 1);
        let mut sorted = table.values.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert!(sorted.len() > VALUES as usize - 8);
    }

    #[test]
    fn inputs_are_seeded_and_in_range() {
        let a = inputs(&mut Rng::new(1), 1000);
        assert_eq!(a, inputs(&mut Rng::new(1), 1000));
        assert!(a.iter().all(|&v| v < VALUES));
        assert!(a.iter().any(|&v| v != a[0]));
    }
}

/// The kernels declared in this file against their C++ parameter types (`check_types` needs
/// no GPU: it reads the signature functions cuda-build compiled next to the kernels).
#[cfg(test)]
mod kernel_declarations {
    use super::*;

    #[test]
    fn match_the_cpp_parameter_types() {
        chapter_common::assert_kernel_types! { se_work }
    }
}
