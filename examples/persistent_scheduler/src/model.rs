//! The CPU model: seeded items (a kind each, a slice of data, a queue order) and what
//! processing every item exactly once must leave, in the same wrapping integer arithmetic as
//! `kernels/scheduler.cu`.

use chapter_common::Rng;

/// The constants of one kind of work (`ps_mul`, `ps_add` in `kernels/scheduler.cu`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Kind {
    /// Multiplier (odd).
    pub mul: u32,
    /// Addend.
    pub add: u32,
}

impl Kind {
    /// The constants of kind `k`.
    ///
    /// ```
    /// let kind = persistent_scheduler::model::Kind::of(3);
    /// assert_eq!(kind.mul % 2, 1);
    /// assert_ne!(kind, persistent_scheduler::model::Kind::of(4));
    /// ```
    pub fn of(k: u32) -> Kind {
        Kind {
            mul: (0x9e37_79b1 ^ k.wrapping_mul(0x85eb_ca6b)) | 1,
            add: k.wrapping_mul(0xc2b2_ae35).wrapping_add(0x27d4_eb2f),
        }
    }
}

/// What an item of kind `kind` does to one element (`ps_work`).
///
/// ```
/// use persistent_scheduler::model::work;
/// assert_eq!(work(5, 0, 0), 5);
/// assert_ne!(work(5, 0, 1), work(5, 1, 1));
/// ```
pub fn work(mut v: u32, kind: u32, rounds: u32) -> u32 {
    let Kind { mul, add } = Kind::of(kind);
    for _ in 0..rounds {
        v = v.wrapping_mul(mul).wrapping_add(add);
        v ^= v >> 16;
    }
    v
}

/// The seeded items.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Items {
    /// Elements per item.
    pub width: u32,
    /// Rounds of [`work`] per element.
    pub rounds: u32,
    /// `kinds[i]`: the kind of item `i` (which graph processes it).
    pub kinds: Vec<u32>,
    /// `input[i * width + j]`: item `i`'s data (random 32-bit values).
    pub input: Vec<u32>,
    /// The order in which the items are pushed onto the queue: a permutation of `0..N`.
    pub order: Vec<u32>,
}

impl Items {
    /// `count` items of `kinds` kinds, `width` elements each.
    pub fn new(seed: u64, count: u32, kinds: u32, width: u32, rounds: u32) -> Items {
        let mut rng = Rng::new(seed);
        let kinds_of = rng.vec_below(count as usize, kinds);
        let input = (0..count as usize * width as usize).map(|_| rng.next_u64() as u32).collect();
        let mut order: Vec<u32> = (0..count).collect();
        for i in (1..order.len()).rev() {
            let j = rng.below(i as u32 + 1) as usize;
            order.swap(i, j);
        }
        Items { width, rounds, kinds: kinds_of, input, order }
    }

    /// How many items.
    pub fn len(&self) -> usize {
        self.kinds.len()
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.kinds.is_empty()
    }

    /// Items per kind.
    pub fn per_kind(&self, kinds: u32) -> Vec<u32> {
        let mut counts = vec![0u32; kinds as usize];
        for &k in &self.kinds {
            counts[k as usize] += 1;
        }
        counts
    }

    /// The output once every item was processed exactly once.
    pub fn expected_output(&self) -> Vec<u32> {
        let width = self.width as usize;
        self.input.iter().enumerate().map(|(at, &v)| work(v, self.kinds[at / width], self.rounds)).collect()
    }

    /// Item ids of each kind in queue order: the lists the host-driven loop hands to the
    /// graphs (kind `k`'s `n`-th launch processes `lists[k][n]`).
    pub fn lists_in_queue_order(&self, kinds: u32) -> Vec<Vec<u32>> {
        let mut lists = vec![Vec::new(); kinds as usize];
        for &item in &self.order {
            lists[self.kinds[item as usize] as usize].push(item);
        }
        lists
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_are_seeded_and_the_order_is_a_permutation() {
        let items = Items::new(7, 1000, 4, 16, 3);
        assert_eq!(items, Items::new(7, 1000, 4, 16, 3));
        assert_ne!(items.order, Items::new(8, 1000, 4, 16, 3).order);
        let mut sorted = items.order.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..1000).collect::<Vec<u32>>());
        assert_ne!(items.order, sorted, "the queue order is shuffled");
        assert!(items.input.iter().any(|&v| v != 0));
    }

    #[test]
    fn every_kind_occurs_and_the_lists_hold_every_item_once() {
        let items = Items::new(1, 500, 4, 8, 1);
        let per_kind = items.per_kind(4);
        assert!(per_kind.iter().all(|&c| c > 50), "{per_kind:?}");
        let lists = items.lists_in_queue_order(4);
        assert_eq!(
            lists.iter().map(Vec::len).collect::<Vec<_>>(),
            per_kind.iter().map(|&c| c as usize).collect::<Vec<_>>()
        );
        let mut all: Vec<u32> = lists.concat();
        all.sort_unstable();
        assert_eq!(all, (0..500).collect::<Vec<u32>>());
    }

    #[test]
    fn the_output_depends_on_the_kind() {
        let items = Items::new(2, 4, 2, 4, 5);
        let out = items.expected_output();
        assert_eq!(out.len(), 16);
        assert_eq!(out[5], work(items.input[5], items.kinds[1], 5));
    }
}
