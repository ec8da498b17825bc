//! The input field and the CPU model of everything the kernels compute (`kernels/refine.cu`),
//! bit for bit: which cells are refined, every point's output, the per-cell sums, and the
//! post-processing graph's total and shares.

use chapter_common::Rng;

/// Values of the field lie in `0..=MAX_VALUE`.
pub const MAX_VALUE: u32 = 65_535;

/// A seeded field of `cells` cells of `points` points: a mean-reverting random walk with steps
/// of at most ±4 (plus at most ±32 of reversion), in which about `front_percent` % of the cells
/// hold one front, a jump of 200 to 4199 inside the cell. Never all zeros.
///
/// ```
/// let v = dynamic_parallelism::model::field(&mut chapter_common::Rng::new(1), 8, 64, 50);
/// assert_eq!(v.len(), 8 * 64);
/// assert!(v.iter().all(|&x| x <= dynamic_parallelism::model::MAX_VALUE));
/// ```
pub fn field(rng: &mut Rng, cells: u32, points: u32, front_percent: u32) -> Vec<u32> {
    let mut values = Vec::with_capacity(cells as usize * points as usize);
    let mut x: i64 = 32_768;
    for _ in 0..cells {
        // The front sits between points at - 1 and at of this cell (never across cells).
        let front = points >= 2 && rng.below(100) < front_percent;
        let at = if front { 1 + rng.below(points - 1) } else { u32::MAX };
        for j in 0..points {
            x += i64::from(rng.below(9)) - 4 + (32_768 - x) / 1024;
            if j == at {
                let jump = 200 + i64::from(rng.below(4000));
                x += if rng.below(2) == 0 { jump } else { -jump };
            }
            x = x.clamp(0, i64::from(MAX_VALUE));
            values.push(x as u32);
        }
    }
    values
}

/// The steepest step of `cell`: max |v[i+1] - v[i]| over i in the cell with i + 1 < n.
pub fn cell_gradient(v: &[u32], cell: u32, points: u32) -> u32 {
    let first = cell as usize * points as usize;
    (first..first + points as usize)
        .filter(|&i| i + 1 < v.len())
        .map(|i| v[i].abs_diff(v[i + 1]))
        .max()
        .unwrap_or(0)
}

/// A refined point's output: the sum of `r` integer sub-samples between v[i] and v[i+1].
///
/// ```
/// use dynamic_parallelism::model::refined_value;
/// assert_eq!(refined_value(&[10, 10], 0, 4), 40); // flat: the same as coarse (r * v)
/// assert_eq!(refined_value(&[0, 100], 0, 4), 0 + 25 + 50 + 75);
/// ```
pub fn refined_value(v: &[u32], i: usize, r: u32) -> u32 {
    let a = v[i];
    let b = if i + 1 < v.len() { v[i + 1] } else { a };
    (0..r).map(|k| (a * (r - k) + b * k) / r).sum()
}

/// Everything the device must end up with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expected {
    /// 1 for each refined cell, 0 for the others.
    pub flags: Vec<u32>,
    /// Every point's output.
    pub out: Vec<u32>,
    /// Each cell's sum of outputs (the tail-launched reduction).
    pub cell_sums: Vec<u64>,
    /// How many cells are refined: the child launches one pass must make.
    pub refined: u32,
    /// The sum of all cells (the post-processing graph's first node).
    pub total: u64,
    /// Each cell's part of the total in millionths (its second node).
    pub share: Vec<u32>,
}

/// The CPU model of one pass over `v` (and of the post-processing graph).
pub fn reference(v: &[u32], cells: u32, points: u32, r: u32, threshold: u32) -> Expected {
    let mut flags = Vec::with_capacity(cells as usize);
    let mut out = Vec::with_capacity(v.len());
    for cell in 0..cells {
        let refine = cell_gradient(v, cell, points) > threshold;
        flags.push(u32::from(refine));
        let first = cell as usize * points as usize;
        for i in first..first + points as usize {
            out.push(if refine { refined_value(v, i, r) } else { r * v[i] });
        }
    }
    let cell_sums: Vec<u64> =
        out.chunks(points as usize).map(|cell| cell.iter().map(|&x| u64::from(x)).sum()).collect();
    let total: u64 = cell_sums.iter().sum();
    let share = cell_sums.iter().map(|&s| (s * 1_000_000).checked_div(total).unwrap_or(0) as u32).collect();
    let refined = flags.iter().sum();
    Expected { flags, out, cell_sums, refined, total, share }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_field_is_seeded_and_has_fronts_only_where_asked() {
        let a = field(&mut Rng::new(3), 64, 128, 25);
        assert_eq!(a, field(&mut Rng::new(3), 64, 128, 25));
        assert_ne!(a, field(&mut Rng::new(4), 64, 128, 25));
        assert!(a.iter().any(|&x| x != 0));
        let smooth = field(&mut Rng::new(3), 64, 128, 0);
        assert!((0..64).all(|c| cell_gradient(&smooth, c, 128) <= 36), "walk steps stay small");
        let fronts = (0..64).filter(|&c| cell_gradient(&a, c, 128) > 64).count();
        assert!((4..=32).contains(&fronts), "about a quarter of 64 cells have a front: {fronts}");
    }

    #[test]
    fn only_cells_over_the_threshold_are_refined() {
        // Cell 0 is flat, cell 1 has a step of 50 inside, cell 2 a step of 10.
        let v = [5, 5, 5, 5, 0, 50, 50, 50, 7, 17, 17, 17];
        let want = reference(&v, 3, 4, 2, 20);
        assert_eq!(want.flags, [0, 1, 0]);
        assert_eq!(want.refined, 1);
        // The step from cell 0's last point (5) to cell 1's first (0) counts for cell 0: 5 <= 20.
        assert_eq!(&want.out[0..4], &[10, 10, 10, 10]);
        // (0, 50): 0 + 25; (50, 50): 50 + 50; (50, 7) across into cell 2: 50 + 28.
        assert_eq!(&want.out[4..8], &[25, 100, 100, 78]);
        assert_eq!(want.cell_sums[0], 40);
        assert_eq!(want.total, want.cell_sums.iter().sum::<u64>());
        assert!(want.share.iter().sum::<u32>() <= 1_000_000);
    }

    #[test]
    fn the_last_point_has_no_right_neighbour() {
        assert_eq!(refined_value(&[3, 9], 1, 5), 45);
    }
}
