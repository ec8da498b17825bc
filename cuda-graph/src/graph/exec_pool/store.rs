//! The parked execs by key, oldest first, at most a capacity of them.

use std::collections::HashMap;

use super::PoolKey;

/// Parked execs by key, oldest first, and at most `capacity` of them.
pub(super) struct Store<T> {
    by_key: HashMap<PoolKey, Vec<(u64, T)>>,
    pub(super) len: usize,
    capacity: usize,
    next_seq: u64,
}

impl<T> Store<T> {
    pub(super) fn new(capacity: usize) -> Store<T> {
        Store { by_key: HashMap::new(), len: 0, capacity, next_seq: 0 }
    }

    /// Parks `item`; returns what no longer fits, oldest first.
    pub(super) fn put(&mut self, key: PoolKey, item: T) -> Vec<T> {
        self.by_key.entry(key).or_default().push((self.next_seq, item));
        self.next_seq += 1;
        self.len += 1;
        self.evict()
    }

    /// The most recently parked item of `key`, if any.
    pub(super) fn take(&mut self, key: &PoolKey) -> Option<T> {
        let items = self.by_key.get_mut(key)?;
        let (_, item) = items.pop()?;
        if items.is_empty() {
            self.by_key.remove(key);
        }
        self.len -= 1;
        Some(item)
    }

    pub(super) fn set_capacity(&mut self, capacity: usize) -> Vec<T> {
        self.capacity = capacity;
        self.evict()
    }

    fn evict(&mut self) -> Vec<T> {
        let mut evicted = Vec::new();
        while self.len > self.capacity {
            let Some(key) =
                self.by_key.iter().min_by_key(|(_, items)| items[0].0).map(|(key, _)| key.clone())
            else {
                break;
            };
            let items = self.by_key.get_mut(&key).expect("the key was just found");
            evicted.push(items.remove(0).1);
            if items.is_empty() {
                self.by_key.remove(&key);
            }
            self.len -= 1;
        }
        evicted
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(shape: &[u64]) -> PoolKey {
        PoolKey { device: 0, flags: 4, shape: shape.to_vec() }
    }

    #[test]
    fn takes_only_the_same_key_newest_first() {
        let mut store = Store::new(8);
        assert!(store.put(key(&[1]), "a").is_empty());
        assert!(store.put(key(&[1]), "b").is_empty());
        assert!(store.put(key(&[2]), "c").is_empty());
        assert_eq!(store.take(&key(&[3])), None);
        assert_eq!(store.take(&key(&[1])), Some("b"));
        assert_eq!(store.take(&key(&[1])), Some("a"));
        assert_eq!(store.take(&key(&[1])), None);
        assert_eq!(store.len, 1);
        let other_device = PoolKey { device: 1, ..key(&[2]) };
        assert_eq!(store.take(&other_device), None);
        assert_eq!(store.take(&key(&[2])), Some("c"));
        assert_eq!(store.len, 0);
    }

    #[test]
    fn a_full_store_gives_back_the_oldest() {
        let mut store = Store::new(2);
        assert!(store.put(key(&[1]), 1).is_empty());
        assert!(store.put(key(&[2]), 2).is_empty());
        assert_eq!(store.put(key(&[1]), 3), vec![1]);
        assert_eq!(store.put(key(&[3]), 4), vec![2]);
        assert_eq!(store.len, 2);
        assert_eq!(store.set_capacity(0), vec![3, 4]);
        assert_eq!(store.take(&key(&[1])), None);
        assert!(store.by_key.is_empty());
    }
}
