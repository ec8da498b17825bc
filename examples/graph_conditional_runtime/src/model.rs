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
///
/// The same result as deciding and updating the whole array `iters` times, computed faster:
/// a decision reads only the 32 sampled elements, so those are followed alone to get the
/// trace, and then every element, which depends only on its own value and the trace, is
/// brought through the trace on all CPU cores.
///
/// ```
/// use graph_conditional_runtime::model::{decide, heavy, light, simulate, HEAVY};
/// let mut data: Vec<u32> = (0..100u32).map(|i| i.wrapping_mul(0x9e37_79b9)).collect();
/// let (mut serial, mut trace) = (data.clone(), Vec::new());
/// for _ in 0..50 {
///     let heavy_branch = decide(&serial);
///     for (i, x) in serial.iter_mut().enumerate() {
///         *x = if heavy_branch { heavy(*x, 4) } else { light(*x, i as u32) };
///     }
///     trace.push(if heavy_branch { HEAVY } else { 2 });
/// }
/// assert_eq!(simulate(&mut data, 50, 4), trace);
/// assert_eq!(data, serial);
/// ```
pub fn simulate(data: &mut [u32], iters: u32, rounds: u32) -> Vec<u32> {
    let n = data.len();
    let stride = if n >= 32 { n / 32 } else { 1 };
    let lanes: Vec<usize> = (0..32).map(|lane| (lane * stride) % n).collect();
    // The sampled elements, followed alone (an index may be sampled by several lanes).
    let mut sampled: Vec<usize> = lanes.clone();
    sampled.sort_unstable();
    sampled.dedup();
    let mut values: Vec<u32> = sampled.iter().map(|&i| data[i]).collect();
    let slot = |i: usize| sampled.binary_search(&i).unwrap_or(0);
    let lane_slots: Vec<usize> = lanes.iter().map(|&i| slot(i)).collect();
    let trace: Vec<u32> = (0..iters)
        .map(|_| {
            let folded = lane_slots.iter().fold(0u32, |acc, &k| acc ^ values[k]);
            let branch = if (folded >> 11) & 1 != 0 { HEAVY } else { LIGHT };
            for (value, &i) in values.iter_mut().zip(&sampled) {
                *value = step(*value, i as u32, branch, rounds);
            }
            branch
        })
        .collect();
    // Every element through the whole trace, in parallel chunks, a block of elements at a time
    // (round by round over the block, so the compiler can vectorize across elements).
    let workers = std::thread::available_parallelism().map_or(1, |w| w.get()).clamp(1, 64);
    let chunk = n.div_ceil(workers).max(1);
    std::thread::scope(|scope| {
        for (c, part) in data.chunks_mut(chunk).enumerate() {
            let trace = &trace;
            scope.spawn(move || {
                for (b, block) in part.chunks_mut(BLOCK).enumerate() {
                    let first = (c * chunk + b * BLOCK) as u32;
                    for &branch in trace {
                        update_block(block, first, branch, rounds);
                    }
                }
            });
        }
    });
    trace
}

/// Elements brought through the trace together (fits in L1).
const BLOCK: usize = 1024;

/// One iteration's update of `block`, whose first element is element `first`.
fn update_block(block: &mut [u32], first: u32, branch: u32, rounds: u32) {
    if branch == HEAVY {
        for _ in 0..rounds {
            for x in block.iter_mut() {
                *x = heavy(*x, 1);
            }
        }
    } else {
        for (x, i) in block.iter_mut().zip(first..) {
            *x = light(*x, i);
        }
    }
}

/// One iteration's update of element `i` on the branch `branch` ([`HEAVY`] or [`LIGHT`]).
fn step(x: u32, i: u32, branch: u32, rounds: u32) -> u32 {
    if branch == HEAVY {
        heavy(x, rounds)
    } else {
        light(x, i)
    }
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

    /// The model as the kernels run it: decide over the whole array, update every element.
    fn simulate_serial(data: &mut [u32], iters: u32, rounds: u32) -> Vec<u32> {
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

    #[test]
    fn following_the_samples_gives_the_serial_result() {
        let mut rng = chapter_common::Rng::new(3);
        for n in [1, 2, 31, 32, 33, 1000, 4099] {
            let data: Vec<u32> = (0..n).map(|_| rng.next_u64() as u32).collect();
            let (mut fast, mut serial) = (data.clone(), data);
            let trace = simulate(&mut fast, 300, 5);
            assert_eq!(trace, simulate_serial(&mut serial, 300, 5), "n = {n}");
            assert_eq!(fast, serial, "n = {n}");
            if n >= 32 {
                assert!(trace.contains(&HEAVY) && trace.contains(&LIGHT), "n = {n}: one branch only");
            }
        }
    }

    #[test]
    fn small_arrays_wrap_their_samples() {
        // n < 32: lanes read data[lane % n]; with n = 2, 16 copies of each: the fold is 0.
        assert!(!decide(&[1 << 11, 0]));
        assert!(decide(&[1 << 11, 0, 0]));
    }
}
