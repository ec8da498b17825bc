//! The CPU model of the branchy loop: the kernels' decision and updates in the same 32-bit
//! integer arithmetic, so its trace and data match the GPU's exactly.

/// Trace code of an iteration that ran the heavy branch.
pub const HEAVY: u32 = 1;
/// Trace code of an iteration that ran the light branch.
pub const LIGHT: u32 = 2;

/// The predicate (`gcr_decide`): xor of the 32 samples `data[(lane * stride) % n]`, bit 11.
///
/// ```
/// use graph_conditional_runtime::model::decide;
/// assert!(!decide(&[0; 64]));
/// // Only sample 0 has bit 11 set: the fold has it too.
/// let mut data = vec![0u32; 64];
/// data[0] = 1 << 11;
/// assert!(decide(&data));
/// ```
pub fn decide(data: &[u32]) -> bool {
    let n = data.len();
    let stride = if n >= 32 { n / 32 } else { 1 };
    let folded = (0..32).fold(0u32, |acc, lane| acc ^ data[(lane * stride) % n]);
    (folded >> 11) & 1 != 0
}

/// The heavy update of one element (`gcr_heavy`).
pub fn heavy(x: u32, rounds: u32) -> u32 {
    (0..rounds).fold(x, |x, _| {
        let x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        x ^ (x >> 13)
    })
}

/// The light update of element `i` (`gcr_light`).
pub fn light(x: u32, i: u32) -> u32 {
    (x ^ (x >> 9)).wrapping_add(0x9e37_79b9).wrapping_add(i)
}

/// Runs `iters` iterations on `data` (decide, then update every element) and returns the trace
/// of branches taken ([`HEAVY`] or [`LIGHT`] per iteration).
pub fn simulate(data: &mut [u32], iters: u32, rounds: u32) -> Vec<u32> {
    (0..iters)
        .map(|_| {
            if decide(data) {
                data.iter_mut().for_each(|x| *x = heavy(*x, rounds));
                HEAVY
            } else {
                data.iter_mut().zip(0u32..).for_each(|(x, i)| *x = light(*x, i));
                LIGHT
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_branches_are_taken_on_random_data() {
        let mut rng = chapter_common::Rng::new(9);
        let mut data: Vec<u32> = (0..4096).map(|_| rng.next_u64() as u32).collect();
        let trace = simulate(&mut data, 200, 16);
        let heavy_runs = trace.iter().filter(|&&t| t == HEAVY).count();
        assert!((40..160).contains(&heavy_runs), "{heavy_runs} of 200 heavy");
        assert!(trace.iter().all(|&t| t == HEAVY || t == LIGHT));
    }

    #[test]
    fn updates_change_every_value() {
        assert_ne!(heavy(5, 1), 5);
        assert_eq!(heavy(5, 0), 5);
        assert_ne!(light(5, 0), light(5, 1));
    }

    #[test]
    fn small_arrays_wrap_their_samples() {
        // n < 32: lanes read data[lane % n]; with n = 2, 16 copies of each: the fold is 0.
        assert!(!decide(&[1 << 11, 0]));
        assert!(decide(&[1 << 11, 0, 0]));
    }
}
