//! Synthetic per-element work that several programs share; each program's kernels do the same
//! in CUDA C++, in the same 32-bit wrapping arithmetic, so results match bit for bit.

use crate::Rng;

/// `rounds` rounds of an LCG step and an xorshift, started from `value` and `salt`: work whose
/// cost is set by `rounds` (`atomic_work_queue`'s items, `streams_events`' chunks).
///
/// ```
/// use chapter_common::lcg_rounds;
/// assert_eq!(lcg_rounds(5, 0, 7), 5u32.wrapping_mul(0x9e37_79b9) ^ 7);
/// assert_ne!(lcg_rounds(5, 10, 7), lcg_rounds(5, 11, 7));
/// ```
pub fn lcg_rounds(value: u32, rounds: u32, salt: u32) -> u32 {
    let mut x = value.wrapping_mul(0x9e37_79b9) ^ salt;
    for _ in 0..rounds {
        x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        x ^= x >> 15;
    }
    x
}

/// One step of a chain of small kernels: `x * mul + add`, then `x ^ (x >> 15)`
/// (`cuda_graphs`' steps, `graph_memory`'s stages).
///
/// ```
/// use chapter_common::MulAdd;
/// assert_eq!(MulAdd { mul: 3, add: 1 }.apply(2), 7);
/// assert_eq!(MulAdd { mul: 1, add: 7 }.apply(0), 7);
/// assert_eq!(MulAdd { mul: 1, add: 0 }.apply(1 << 15), (1 << 15) ^ 1);
/// assert_ne!(MulAdd { mul: 3, add: 0x8000_0000 }.apply(1), 0x8000_0003);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MulAdd {
    /// Multiplier (odd when random, so the map is a bijection before the xorshift).
    pub mul: u32,
    /// Addend.
    pub add: u32,
}

impl MulAdd {
    /// What the step does to one element.
    pub fn apply(self, x: u32) -> u32 {
        let x = x.wrapping_mul(self.mul).wrapping_add(self.add);
        x ^ (x >> 15)
    }

    /// `count` steps with random constants (odd multipliers), two draws of `rng` each.
    pub fn random(rng: &mut Rng, count: u32) -> Vec<MulAdd> {
        (0..count).map(|_| MulAdd { mul: rng.next_u64() as u32 | 1, add: rng.next_u64() as u32 }).collect()
    }
}

/// `value` through each step of `steps` in order.
pub fn apply_all(value: u32, steps: &[MulAdd]) -> u32 {
    steps.iter().fold(value, |x, step| step.apply(x))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_multipliers_are_odd_and_the_steps_seeded() {
        let steps = MulAdd::random(&mut Rng::new(3), 50);
        assert!(steps.iter().all(|s| s.mul % 2 == 1));
        assert_eq!(steps, MulAdd::random(&mut Rng::new(3), 50));
        assert_ne!(steps, MulAdd::random(&mut Rng::new(4), 50));
    }

    #[test]
    fn apply_all_applies_every_step_in_order() {
        let steps = [MulAdd { mul: 0x9e37_79b9, add: 1 }, MulAdd { mul: 5, add: 0x7f4a_7c15 }];
        assert_eq!(apply_all(2, &steps), steps[1].apply(steps[0].apply(2)));
        assert_eq!(apply_all(10, &steps), steps[1].apply(steps[0].apply(10)));
        assert_ne!(apply_all(2, &steps), apply_all(2, &[steps[1], steps[0]]), "order matters");
        let stages = [MulAdd { mul: 3, add: 1 }, MulAdd { mul: 5, add: 0x8000_0000 }];
        assert_eq!(apply_all(9, &stages), stages[1].apply(stages[0].apply(9)));
        assert_ne!(apply_all(9, &stages), apply_all(9, &[stages[1], stages[0]]), "order matters");
    }
}
