//! Reuse of dropped device-launch execs instead of destroying them.
//!
//! On CUDA 13.0 (driver 580), destroying execs that kernels launched makes later device
//! launches of fresh execs silently not run, or fail with `cudaErrorIllegalAddress`
//! (RELIABILITY.md, "Known issue"; `device-launch/repro/exec_destroy.cu` shows it in plain
//! C++). Reusing them through `cudaGraphExecUpdate` does not. So a dropped
//! `GraphExec<DeviceLaunch>` is parked here, and instantiating a graph of the same shape, for
//! the same device and flags, takes it back updated to the new graph's parameters.
//!
//! An exec's nodes stay named by the graph it was first instantiated from, after any update
//! (CUDA refuses the update graph's nodes in per-node calls; measured on the H100). A parked
//! exec therefore keeps that origin graph, and a reused one translates the new graph's nodes
//! to the origin's by position: CUDA pairs nodes of same-shaped graphs in that order.
//! These references ([`OriginRef`]) are counted apart: once only they hold a graph, what its
//! nodes pointed to is released ([`owner_leaving`]).
//!
//! Device-launch execs fence every host launch, and dropping one waits for its last launch
//! before parking it: a parked exec is never updated while a launch of it (a self-relaunching
//! loop, say) is still running, which CUDA does not allow for device graphs.

use std::collections::HashMap;
use std::ptr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use cudart_graph_sys as sys;

use super::{list_nodes, GraphCore};
use crate::release::record_drop_error;

/// How many dropped device-launch execs the pool keeps, unless
/// [`set_exec_pool_capacity`] says otherwise.
///
/// ```
/// assert!(cuda_graph::graph::DEFAULT_EXEC_POOL_CAPACITY >= 1);
/// ```
pub const DEFAULT_EXEC_POOL_CAPACITY: usize = 1024;

/// What makes two device-launch execs interchangeable: the device, the instantiate flags, and
/// the graph's shape (node kinds and kernel functions in node order, and the edges between
/// node positions, in edge order).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) struct PoolKey {
    device: i32,
    flags: u64,
    shape: Vec<u64>,
}

/// A graph's nodes in CUDA's order and the key of its execs.
pub(super) struct Shape {
    pub(super) nodes: Vec<sys::cudaGraphNode_t>,
    pub(super) key: PoolKey,
}

impl Shape {
    /// The instantiate flags the key was made with.
    pub(super) fn key_flags(&self) -> u64 {
        self.key.flags
    }
}

/// Reads the shape of `graph` (a live root graph whose family the caller holds). `None` when
/// CUDA cannot say (execs of such graphs are destroyed, not parked).
pub(super) fn shape_of(graph: sys::cudaGraph_t, flags: u64) -> Option<Shape> {
    let mut device = 0;
    // SAFETY: `device` is a valid out-pointer.
    if unsafe { sys::cudaGetDevice(&mut device) } != sys::cudaError::cudaSuccess {
        return None;
    }
    let (status, nodes) = list_nodes(graph);
    if status != sys::cudaError::cudaSuccess {
        return None;
    }
    let position: HashMap<usize, u64> =
        nodes.iter().enumerate().map(|(index, &node)| (node as usize, index as u64)).collect();
    let mut shape = Vec::with_capacity(2 * nodes.len() + 1);
    shape.push(nodes.len() as u64);
    for &node in &nodes {
        let mut kind = sys::cudaGraphNodeType(0);
        // SAFETY: `node` is a node of the live graph the caller holds; `kind` is writable.
        if unsafe { sys::cudaGraphNodeGetType(node, &mut kind) } != sys::cudaError::cudaSuccess {
            return None;
        }
        shape.push(kind.0 as u64);
        if kind == sys::cudaGraphNodeType::cudaGraphNodeTypeKernel {
            shape.push(kernel_function(node));
        }
    }
    let (from, to, data) = edges(graph)?;
    shape.push(from.len() as u64);
    for ((from, to), data) in from.iter().zip(&to).zip(&data) {
        let (Some(&from), Some(&to)) = (position.get(&(*from as usize)), position.get(&(*to as usize)))
        else {
            return None;
        };
        let ports = u64::from(data.from_port) | u64::from(data.to_port) << 8 | u64::from(data.type_) << 16;
        shape.extend([from, to, ports]);
    }
    Some(Shape { nodes, key: PoolKey { device, flags, shape } })
}

/// The kernel node's function as a number, or 0 when CUDA cannot say: the function only
/// narrows the search (an update to another function may still succeed).
fn kernel_function(node: sys::cudaGraphNode_t) -> u64 {
    let mut params = sys::cudaKernelNodeParams::default();
    // SAFETY: `node` is a live kernel node; `params` is writable.
    if unsafe { sys::cudaGraphKernelNodeGetParams(node, &mut params) } == sys::cudaError::cudaSuccess {
        return params.func as u64;
    }
    // SAFETY: plain call; clears this thread's last error (the failure above), so that a
    // later launch check does not take it for its own.
    let _ = unsafe { sys::cudaGetLastError() };
    0
}

type Edges = (Vec<sys::cudaGraphNode_t>, Vec<sys::cudaGraphNode_t>, Vec<sys::cudaGraphEdgeData>);

/// The graph's edges with their data, in CUDA's order.
fn edges(graph: sys::cudaGraph_t) -> Option<Edges> {
    let mut count = 0;
    // SAFETY: the graph is alive and held by the caller; null arrays ask for the count.
    let status = unsafe {
        sys::cudaGraphGetEdges(graph, ptr::null_mut(), ptr::null_mut(), ptr::null_mut(), &mut count)
    };
    if status != sys::cudaError::cudaSuccess {
        return None;
    }
    let (mut from, mut to) = (vec![ptr::null_mut(); count], vec![ptr::null_mut(); count]);
    let mut data = vec![sys::cudaGraphEdgeData::default(); count];
    if count > 0 {
        // SAFETY: as above; each array has room for `count` entries and CUDA writes at most
        // that many.
        let status = unsafe {
            sys::cudaGraphGetEdges(graph, from.as_mut_ptr(), to.as_mut_ptr(), data.as_mut_ptr(), &mut count)
        };
        if status != sys::cudaError::cudaSuccess {
            return None;
        }
        from.truncate(count);
        to.truncate(count);
        data.truncate(count);
    }
    Some((from, to, data))
}

/// What a device-launch exec needs to be parked when dropped: its key, and the graph whose
/// nodes name its nodes, with those nodes in CUDA's order.
pub(super) struct Recyclable {
    pub(super) key: PoolKey,
    pub(super) origin: OriginRef,
    pub(super) origin_nodes: Arc<[NodeHandle]>,
    /// Whether a node was disabled through the crate: a reuse enables every node again.
    pub(super) nodes_toggled: bool,
}

/// A raw node handle of an origin graph, which the pool keeps alive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct NodeHandle(pub(super) sys::cudaGraphNode_t);

// SAFETY: an identifier of a node of a graph the holder keeps alive; passed to CUDA only under
// the family's lock.
unsafe impl Send for NodeHandle {}
// SAFETY: as above; shared access only copies the identifier.
unsafe impl Sync for NodeHandle {}

/// A parked exec: its last host launch finished before it was parked (device-launch execs
/// fence their launches and wait on drop), and nothing launches it any more.
pub(super) struct Parked {
    pub(super) raw: sys::cudaGraphExec_t,
    pub(super) recyclable: Recyclable,
}

// SAFETY: an exec that nobody launches any more may be updated or destroyed from any thread.
unsafe impl Send for Parked {}

impl Parked {
    /// Destroys the exec; the origin graph goes with the last of its owners.
    fn destroy(self) {
        // SAFETY: the pool owned the exec alone; it is destroyed once.
        record_drop_error(unsafe { sys::cudaGraphExecDestroy(self.raw) }, "cudaGraphExecDestroy");
    }
}

/// Parked execs by key, oldest first, and at most `capacity` of them.
struct Store<T> {
    by_key: HashMap<PoolKey, Vec<(u64, T)>>,
    len: usize,
    capacity: usize,
    next_seq: u64,
}

impl<T> Store<T> {
    fn new(capacity: usize) -> Store<T> {
        Store { by_key: HashMap::new(), len: 0, capacity, next_seq: 0 }
    }

    /// Parks `item`; returns what no longer fits, oldest first.
    fn put(&mut self, key: PoolKey, item: T) -> Vec<T> {
        self.by_key.entry(key).or_default().push((self.next_seq, item));
        self.next_seq += 1;
        self.len += 1;
        self.evict()
    }

    /// The most recently parked item of `key`, if any.
    fn take(&mut self, key: &PoolKey) -> Option<T> {
        let items = self.by_key.get_mut(key)?;
        let (_, item) = items.pop()?;
        if items.is_empty() {
            self.by_key.remove(key);
        }
        self.len -= 1;
        Some(item)
    }

    fn set_capacity(&mut self, capacity: usize) -> Vec<T> {
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

static POOL: Mutex<Option<Store<Parked>>> = Mutex::new(None);
static PARKED_TOTAL: AtomicU64 = AtomicU64::new(0);
static REUSED: AtomicU64 = AtomicU64::new(0);
static REFUSED: AtomicU64 = AtomicU64::new(0);
static EVICTED: AtomicU64 = AtomicU64::new(0);

fn pool() -> MutexGuard<'static, Option<Store<Parked>>> {
    POOL.lock().unwrap_or_else(PoisonError::into_inner)
}

fn with_store<R>(f: impl FnOnce(&mut Store<Parked>) -> R) -> R {
    let mut pool = pool();
    f(pool.get_or_insert_with(|| Store::new(DEFAULT_EXEC_POOL_CAPACITY)))
}

/// Parks a dropped exec (whose last host launch finished and which nobody launches any
/// more), destroying the oldest if the pool is full.
pub(super) fn park(raw: sys::cudaGraphExec_t, recyclable: Recyclable) {
    PARKED_TOTAL.fetch_add(1, Ordering::Relaxed);
    let key = recyclable.key.clone();
    let evicted = with_store(|store| store.put(key, Parked { raw, recyclable }));
    finish_evictions(evicted); // outside the pool's lock: destroying calls CUDA
}

/// Serializes every change of a graph's [`OriginRef`] count with the reading of both counts
/// in [`owner_leaving`], so that the two are read consistently.
static ORIGIN_COUNTS: Mutex<()> = Mutex::new(());

fn origin_counts() -> MutexGuard<'static, ()> {
    ORIGIN_COUNTS.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Releases what the nodes of `graph` point to when an owner is going (holding `leaving`
/// of its references, about to drop them) and nothing but [`OriginRef`]s would be left: no
/// one could then launch `graph` or instantiate it, and the execs that name their nodes by
/// it take their parameters from other graphs (or are parked).
///
/// Other references are only made from other references that are not `OriginRef`s, so once
/// none but the leaving owner's is left, none can appear. `OriginRef`s change both counts
/// under [`ORIGIN_COUNTS`] (a new one) or drop their reference after lowering the count (a
/// dropped one), so the check never counts fewer references than there are. It never waits
/// for the graph's lock (another thread may hold it while waiting for a capture): if the lock
/// is taken, the release is left to a later owner.
pub(super) fn owner_leaving(graph: &Arc<GraphCore>, leaving: usize) {
    let released = {
        let _counts = origin_counts();
        let names = graph.name_refs.load(Ordering::Acquire);
        if names == 0 || Arc::strong_count(graph) > names + leaving {
            return;
        }
        match graph.try_lock_state() {
            Some(mut state) => state.keep_alive.take(),
            None => return,
        }
    };
    drop(released); // outside the locks: freeing calls CUDA
}

/// A reference to a graph kept only because its nodes name an exec's nodes (a parked exec's
/// origin, or a reused exec's): counted apart, so that what the graph's nodes point to can
/// be released once only such references are left.
pub(super) struct OriginRef(Option<Arc<GraphCore>>);

impl OriginRef {
    pub(super) fn new(graph: &Arc<GraphCore>) -> OriginRef {
        let _counts = origin_counts();
        graph.name_refs.fetch_add(1, Ordering::AcqRel);
        OriginRef(Some(graph.clone()))
    }

    pub(super) fn graph(&self) -> &Arc<GraphCore> {
        self.0.as_ref().expect("an OriginRef holds its graph until dropped")
    }
}

impl Clone for OriginRef {
    fn clone(&self) -> OriginRef {
        OriginRef::new(self.graph())
    }
}

impl Drop for OriginRef {
    fn drop(&mut self) {
        let graph = self.0.take();
        if let Some(graph) = &graph {
            let _counts = origin_counts();
            graph.name_refs.fetch_sub(1, Ordering::AcqRel);
        }
        // Dropped after the count and outside the lock: dropping the last reference releases
        // the graph, which may drop execs (their owners), which take the lock again.
        drop(graph);
    }
}

/// Takes a parked exec of `key` out of the pool.
pub(super) fn take(key: &PoolKey) -> Option<Parked> {
    with_store(|store| store.take(key))
}

/// Puts back an exec that was not reused: CUDA refused the update (`refused`), or the origin
/// graph was busy. Whatever a refused update changed, the next reuse updates every node.
pub(super) fn put_back(parked: Parked, refused: bool) {
    if refused {
        REFUSED.fetch_add(1, Ordering::Relaxed);
    }
    let key = parked.recyclable.key.clone();
    let evicted = with_store(|store| store.put(key, parked));
    finish_evictions(evicted);
}

/// Counts a successful reuse.
pub(super) fn count_reuse() {
    REUSED.fetch_add(1, Ordering::Relaxed);
}

fn finish_evictions(evicted: Vec<Parked>) {
    EVICTED.fetch_add(evicted.len() as u64, Ordering::Relaxed);
    evicted.into_iter().for_each(Parked::destroy);
}

/// What the pool of dropped device-launch execs holds and has done since the process started
/// (see [`set_exec_pool_capacity`]).
///
/// ```no_run
/// let stats = cuda_graph::graph::exec_pool_stats();
/// println!("{} execs parked, {} reused", stats.parked_now, stats.reused);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ExecPoolStats {
    /// Execs parked now.
    pub parked_now: usize,
    /// Execs parked (dropped `GraphExec<DeviceLaunch>`s) in all.
    pub parked_total: u64,
    /// Instantiations served by a parked exec.
    pub reused: u64,
    /// Parked execs whose update to a new graph CUDA refused (the instantiation then made a
    /// new exec).
    pub update_refused: u64,
    /// Parked execs destroyed because the pool was full.
    pub evicted: u64,
}

/// The pool's counters.
///
/// ```no_run
/// assert!(cuda_graph::graph::exec_pool_stats().parked_now <= cuda_graph::graph::DEFAULT_EXEC_POOL_CAPACITY);
/// ```
pub fn exec_pool_stats() -> ExecPoolStats {
    ExecPoolStats {
        parked_now: with_store(|store| store.len),
        parked_total: PARKED_TOTAL.load(Ordering::Relaxed),
        reused: REUSED.load(Ordering::Relaxed),
        update_refused: REFUSED.load(Ordering::Relaxed),
        evicted: EVICTED.load(Ordering::Relaxed),
    }
}

/// Sets how many dropped device-launch execs are kept for reuse (default
/// [`DEFAULT_EXEC_POOL_CAPACITY`]), destroying the
/// oldest beyond it. Destroying device-launch execs that kernels launched is what makes later
/// device launches fail on CUDA 13.0 (RELIABILITY.md, "Known issue"): lower it only to give
/// memory back in a program whose execs never ran from the device.
///
/// The shape that picks a parked exec leaves out kernel node attributes. Graphs whose nodes
/// differ in one that an update cannot change (cooperative launch; priority, when instantiated
/// with `use_node_priority`) are refused at every reuse: [`ExecPoolStats::update_refused`]
/// counts them, and each refusal parks one more exec until the pool is full.
///
/// ```no_run
/// cuda_graph::graph::set_exec_pool_capacity(4096);
/// ```
pub fn set_exec_pool_capacity(capacity: usize) {
    let evicted = with_store(|store| store.set_capacity(capacity));
    finish_evictions(evicted);
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
