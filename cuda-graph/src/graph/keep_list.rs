//! What a graph family's nodes point to: each owner kept once, however many nodes use it (a
//! graph of 10,000 kernel nodes on one buffer keeps one entry, not 10,000), so that what
//! scans the list per launch, update or instantiation stays cheap.

use std::collections::HashSet;
use std::sync::Arc;

use crate::memory::KeepAlive;

/// Owners in the order first kept, without repeats (by allocation).
#[derive(Default)]
pub(crate) struct KeepList {
    owners: Vec<KeepAlive>,
    seen: HashSet<usize>,
}

impl KeepList {
    /// Keeps `owner` unless it is kept already.
    pub(crate) fn push(&mut self, owner: KeepAlive) {
        if self.seen.insert(Arc::as_ptr(&owner) as *const () as usize) {
            self.owners.push(owner);
        }
    }

    pub(crate) fn iter(&self) -> std::slice::Iter<'_, KeepAlive> {
        self.owners.iter()
    }

    pub(crate) fn as_slice(&self) -> &[KeepAlive] {
        &self.owners
    }

    /// Gives up every owner (to drop them elsewhere).
    pub(crate) fn take(&mut self) -> Vec<KeepAlive> {
        self.seen.clear();
        std::mem::take(&mut self.owners)
    }
}

impl Extend<KeepAlive> for KeepList {
    fn extend<I: IntoIterator<Item = KeepAlive>>(&mut self, owners: I) {
        owners.into_iter().for_each(|owner| self.push(owner));
    }
}

impl From<Vec<KeepAlive>> for KeepList {
    fn from(owners: Vec<KeepAlive>) -> KeepList {
        let mut list = KeepList::default();
        list.extend(owners);
        list
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_owner_is_kept_once_and_others_in_order() {
        let (a, b): (KeepAlive, KeepAlive) = (Arc::new(1u32), Arc::new(2u32));
        let mut list = KeepList::from(vec![a.clone(), a.clone()]);
        list.extend([b.clone(), a.clone(), b.clone()]);
        let kept: Vec<u32> = list.iter().map(|k| *k.downcast_ref::<u32>().unwrap()).collect();
        assert_eq!(kept, [1, 2]);
        assert_eq!(Arc::strong_count(&a), 2, "repeats are not held");
        assert_eq!(list.take().len(), 2);
        assert_eq!(list.iter().count(), 0);
        list.push(a.clone());
        assert_eq!(list.iter().count(), 1, "a taken owner may be kept again");
    }
}
