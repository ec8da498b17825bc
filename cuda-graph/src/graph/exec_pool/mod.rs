//! The one home of the CUDA 13.0 exec-destroy workaround: dropped device-launch execs are
//! parked here and reused through `cudaGraphExecUpdate` instead of destroyed.
//!
//! # The bug (in CUDA, not in these crates)
//! On CUDA 13.0 (driver 580.159.04, seen on the H100 on 2026-11-23), destroying
//! (`cudaGraphExecDestroy`) multi-node graphs that were instantiated for device launch and
//! launched from the device, many times over (48 rounds of 16 copies of graphs of 1 to 64
//! nodes), breaks later device launches of other, fresh execs: they silently do not run, or
//! run only part of their nodes, with no error from any launch, or a later call fails with the
//! sticky `cudaErrorIllegalAddress` (700). One-node graphs and a few rounds do not trigger it,
//! and a `cudaDeviceSynchronize` before each destroy does not help. Never destroying the execs,
//! or reusing them for graphs of the same topology through `cudaGraphExecUpdate`, does not
//! trigger it.
//!
//! # Where the measurements are
//! - The reproducer: `device-launch/repro/exec_destroy.cu`, plain CUDA C++ with no Rust;
//!   `bash scripts/run-standalone repro-exec-destroy` builds it and runs each variant (which
//!   execs are destroyed, widths, rounds, reuse through update; about 20 s on a GPU machine).
//! - The results, per variant, and the same experiment through the crates (`exec_churn`,
//!   `ch12 --in-process` with destroy, synchronize-then-destroy, leak, and this pool):
//!   RELIABILITY.md, "Known issue (worked around)".
//! - The tests of the workaround: `cuda-graph/tests/device_exec_reuse.rs` (reused execs run
//!   the new graph's parameters, per-node setters reach the right node, nodes are enabled
//!   again, other shapes get new execs, memory is released) and
//!   `device-launch/tests/exec_churn.rs` (the churn that triggered the bug, checking that reuse
//!   happened).
//!
//! # The workaround
//! A dropped `GraphExec<DeviceLaunch>` is never destroyed: its drop (`exec/release.rs`) parks
//! it here, and [`Graph::instantiate`](super::Graph::instantiate) of a graph of the same shape
//! (node kinds and kernel functions in node order, edges with their data; `shape`), on the same
//! device with the same flags, takes it back (`reuse`): updated to the new graph, every node
//! enabled again, uploaded if asked. [`exec_pool_stats`] counts what happened; at most
//! [`set_exec_pool_capacity`] execs ([`DEFAULT_EXEC_POOL_CAPACITY`]) are parked, beyond that
//! the oldest is destroyed (`store`), so a program that makes device-launch graphs of ever new
//! shapes beyond the capacity destroys execs again.
//!
//! An exec's nodes stay named by the graph it was first instantiated from, after any update
//! (CUDA refuses the update graph's nodes in per-node calls; measured on the H100). A parked
//! exec therefore keeps that origin graph, and a reused one translates the new graph's nodes
//! to the origin's by position: CUDA pairs nodes of same-shaped graphs in that order
//! ([`NodeAlias`]). These references ([`OriginRef`]) are counted apart: once only they hold a
//! graph, what its nodes pointed to is released ([`owner_leaving`]; `origin`).
//!
//! Device-launch execs fence every host launch, and dropping one waits for its last launch
//! before parking it: a parked exec is never updated while a launch of it (a self-relaunching
//! loop, say) is still running, which CUDA does not allow for device graphs. Kernels must not
//! launch it either once it is dropped: the `device-launch` crate's exec owner waits for the
//! device before dropping a `GraphExec<DeviceLaunch>` that kernels were given.
//!
//! The rest of the crate only calls in: instantiation (`shape_of`, `take` and `Graph::reuse`,
//! `Recyclable::new`), an exec's drop (`park`), per-node setters ([`NodeAlias`]), and the
//! owners of a graph letting go of it ([`owner_leaving`]).

mod origin;
mod reuse;
mod shape;
mod store;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use crate::runtime as sys;

use super::GraphCore;
use crate::release::record_drop_error;
use store::Store;

pub(in crate::graph) use origin::{owner_leaving, NodeAlias, NodeHandle, OriginRef};
pub(in crate::graph) use shape::{shape_of, PoolKey, Shape};

/// How many dropped device-launch execs the pool keeps, unless
/// [`set_exec_pool_capacity`] says otherwise.
///
/// ```
/// assert!(cuda_graph::graph::DEFAULT_EXEC_POOL_CAPACITY >= 1);
/// ```
pub const DEFAULT_EXEC_POOL_CAPACITY: usize = 1024;

/// What a device-launch exec needs to be parked when dropped: its key, and the graph whose
/// nodes name its nodes, with those nodes in CUDA's order.
pub(in crate::graph) struct Recyclable {
    pub(in crate::graph) key: PoolKey,
    pub(in crate::graph) origin: OriginRef,
    pub(in crate::graph) origin_nodes: Arc<[NodeHandle]>,
    /// Whether a node was disabled through the crate: a reuse enables every node again.
    pub(in crate::graph) nodes_toggled: bool,
}

impl Recyclable {
    /// What an exec newly instantiated from `graph`, of shape `shape`, needs to be parked.
    pub(in crate::graph) fn new(graph: &Arc<GraphCore>, shape: Shape) -> Recyclable {
        Recyclable {
            key: shape.key,
            origin: OriginRef::new(graph),
            origin_nodes: shape.nodes.iter().map(|&node| NodeHandle(node)).collect(),
            nodes_toggled: false,
        }
    }
}

/// A parked exec: its last host launch finished before it was parked (device-launch execs
/// fence their launches and wait on drop), and nothing launches it any more.
pub(in crate::graph) struct Parked {
    pub(in crate::graph) raw: sys::cudaGraphExec_t,
    pub(in crate::graph) recyclable: Recyclable,
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
pub(in crate::graph) fn park(raw: sys::cudaGraphExec_t, recyclable: Recyclable) {
    PARKED_TOTAL.fetch_add(1, Ordering::Relaxed);
    let key = recyclable.key.clone();
    let evicted = with_store(|store| store.put(key, Parked { raw, recyclable }));
    finish_evictions(evicted); // outside the pool's lock: destroying calls CUDA
}

/// Takes a parked exec of `key` out of the pool.
pub(in crate::graph) fn take(key: &PoolKey) -> Option<Parked> {
    with_store(|store| store.take(key))
}

/// Puts back an exec that was not reused: CUDA refused the update (`refused`), or the origin
/// graph was busy. Whatever a refused update changed, the next reuse updates every node.
pub(in crate::graph) fn put_back(parked: Parked, refused: bool) {
    if refused {
        REFUSED.fetch_add(1, Ordering::Relaxed);
    }
    let key = parked.recyclable.key.clone();
    let evicted = with_store(|store| store.put(key, parked));
    finish_evictions(evicted);
}

/// Counts a successful reuse.
pub(in crate::graph) fn count_reuse() {
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
/// device launches fail on CUDA 13.0 (explained in the source, `cuda-graph/src/graph/exec_pool/mod.rs`): lower it only to give
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
