//! The C++ twin (kernels/twin.cu), called through its `extern "C"` functions.
//!
//! Each wrapper turns a twin status into [`BenchError::Twin`] naming the CUDA call that failed
//! inside the twin. The twin's objects are released on drop; a release that fails is kept
//! for [`take_release_errors`], which the run checks at the end (a drop cannot return it).

use std::ffi::{c_char, c_int, CStr};
use std::marker::PhantomData;
use std::ptr::{self, NonNull};
use std::sync::Mutex;

use cuda_graph::{CudaError, DeviceBuffer, DevicePtr};

use crate::error::{BenchError, Result};

#[repr(C)]
struct RawSession {
    _private: [u8; 0],
}
#[repr(C)]
struct RawChain {
    _private: [u8; 0],
}
#[repr(C)]
struct RawLoop {
    _private: [u8; 0],
}
#[repr(C)]
struct RawWidth {
    _private: [u8; 0],
}

/// How the C++ twin adds a chain's kernel nodes (`node_api` in twin.cu's build_chain).
#[derive(Clone, Copy)]
enum NodeApi {
    AddKernelNode = 0,
    AddNode = 1,
}

/// Which loop a [`TwinLoop`] runs (`TwinLoopKind` in twin.cu).
#[derive(Clone, Copy)]
enum LoopKind {
    While = 0,
    SelfRelaunch = 1,
}

extern "C" {
    fn twin_failed_call() -> *const c_char;
    fn twin_session_create(out: *mut *mut RawSession) -> c_int;
    fn twin_session_share_counter(session: *mut RawSession, counter: *mut u32) -> c_int;
    fn twin_session_destroy(session: *mut RawSession) -> c_int;
    fn twin_stream_empty(
        session: *mut RawSession, launches: c_int, programmatic: c_int, us_per_launch: *mut f64,
    ) -> c_int;
    fn twin_chain_create(
        session: *mut RawSession, nodes: c_int, value: u32, node_api: c_int, out: *mut *mut RawChain,
    ) -> c_int;
    fn twin_chain_destroy(chain: *mut RawChain) -> c_int;
    fn twin_pdl_chain_create(
        session: *mut RawSession, rmw: c_int, programmatic: c_int, nodes: c_int, out: *mut *mut RawChain,
    ) -> c_int;
    fn twin_chain_replay(
        session: *mut RawSession, chain: *mut RawChain, replays: c_int, us_per_node: *mut f64,
        counter: *mut u32,
    ) -> c_int;
    fn twin_chain_instantiate(chain: *mut RawChain, us: *mut f64) -> c_int;
    fn twin_chain_update(chain: *mut RawChain, from: *const RawChain, us: *mut f64) -> c_int;
    fn twin_loop_host(
        session: *mut RawSession, steps: c_int, mapped: c_int, us_per_step: *mut f64, counter: *mut u32,
    ) -> c_int;
    fn twin_loop_create(session: *mut RawSession, kind: c_int, steps: c_int, out: *mut *mut RawLoop)
        -> c_int;
    fn twin_loop_destroy(graph: *mut RawLoop) -> c_int;
    fn twin_loop_run(
        session: *mut RawSession, graph: *mut RawLoop, us_per_step: *mut f64, counter: *mut u32,
    ) -> c_int;
    fn twin_width_create(
        session: *mut RawSession, width: c_int, iters: c_int, out: *mut *mut RawWidth,
    ) -> c_int;
    fn twin_width_destroy(width: *mut RawWidth) -> c_int;
    fn twin_width_run(
        session: *mut RawSession, width: *mut RawWidth, mode: u32, us_per_launch: *mut f64,
        counter: *mut u32, steps: *mut u32,
    ) -> c_int;
    fn twin_cdp_device(
        session: *mut RawSession, children: c_int, us_per_child: *mut f64, counter: *mut u32,
    ) -> c_int;
    fn twin_cdp_host(
        session: *mut RawSession, children: c_int, us_per_child: *mut f64, counter: *mut u32,
    ) -> c_int;
}

/// `Ok` for status 0; else the twin error for `function`, naming the failed call.
fn check(status: c_int, function: &'static str) -> Result<()> {
    if status == 0 {
        return Ok(());
    }
    // SAFETY: twin_failed_call returns a pointer to a static, NUL-terminated string literal
    // (the text of the failed call, or "").
    let failed_call = unsafe { CStr::from_ptr(twin_failed_call()) }.to_string_lossy().into_owned();
    Err(BenchError::Twin { function, failed_call, error: CudaError::from_code(status, function) })
}

/// The object a `twin_*_create` returned, or an error if it returned none.
fn non_null<T>(raw: *mut T, function: &'static str) -> Result<NonNull<T>> {
    NonNull::new(raw).ok_or_else(|| BenchError::Twin {
        function,
        failed_call: "returned nothing".into(),
        error: CudaError::from_code(999, function),
    })
}

/// Converts a count for the C side.
fn c_count(what: &str, value: u32) -> Result<c_int> {
    c_int::try_from(value).map_err(|_| BenchError::Options(format!("{what} = {value} is too large")))
}

static RELEASE_ERRORS: Mutex<Vec<BenchError>> = Mutex::new(Vec::new());

fn record_release(status: c_int, function: &'static str) {
    if let Err(err) = check(status, function) {
        RELEASE_ERRORS.lock().unwrap_or_else(|p| p.into_inner()).push(err);
    }
}

/// The errors met while releasing twin objects since the last call.
pub fn take_release_errors() -> Vec<BenchError> {
    std::mem::take(&mut *RELEASE_ERRORS.lock().unwrap_or_else(|p| p.into_inner()))
}

/// The twin's stream, timing events, counter and loop flag (`TwinSession`), on the current
/// device. Not `Send`: the twin keeps its last failed call per thread.
pub struct Twin {
    raw: NonNull<RawSession>,
    /// The counter the twin's kernels count into, the Rust side's: kept alive as long as the
    /// session (dropped after it, being declared after it).
    _counter: DevicePtr<u32>,
    _not_send: PhantomData<*mut ()>,
}

impl Twin {
    /// Creates the twin's session (`twin_session_create`), whose kernels count into `counter`
    /// (`twin_session_share_counter`), the Rust side's: both sides' kernels then update the same
    /// memory, whose place alone moves a chain's replay time by about 5%
    /// (`bench/results/replay_probe.txt`). The two sides' samples never overlap (each waits
    /// for its work before the next begins), and each resets the counter first.
    pub fn new(counter: &DeviceBuffer<u32>) -> Result<Twin> {
        let mut raw = ptr::null_mut();
        // SAFETY: `raw` is a valid out-pointer; the twin sets it only on success.
        check(unsafe { twin_session_create(&mut raw) }, "twin_session_create")?;
        let raw = non_null(raw, "twin_session_create")?;
        let twin = Twin { raw, _counter: counter.ptr(), _not_send: PhantomData };
        // SAFETY: the session is alive; the counter is one u32 of device memory on the current
        // device (the session's), kept alive by `twin._counter` until after the session is
        // destroyed; no chain or graph of the twin exists yet.
        check(
            unsafe { twin_session_share_counter(twin.raw.as_ptr(), counter.as_raw().cast()) },
            "twin_session_share_counter",
        )?;
        Ok(twin)
    }

    /// (a) One sample of `launches` empty-kernel launches: µs per launch. With `programmatic`,
    /// `bench_pdl_empty` launched by `cudaLaunchKernelEx` with programmatic stream
    /// serialization; else `bench_empty` by `cudaLaunchKernel`.
    pub fn stream_empty(&self, launches: u32, programmatic: bool) -> Result<f64> {
        let launches = c_count("launches", launches)?;
        let mut us = 0.0;
        // SAFETY: the session is alive; `us` is a valid out-pointer.
        let status =
            unsafe { twin_stream_empty(self.raw.as_ptr(), launches, c_int::from(programmatic), &mut us) };
        check(status, "twin_stream_empty")?;
        Ok(us)
    }

    /// (b, c) A chain of `nodes` `bench_chain_step(counter, value)` nodes, instantiated and
    /// uploaded; the nodes are added with `cudaGraphAddKernelNode`.
    pub fn chain(&self, nodes: u32, value: u32) -> Result<TwinChain<'_>> {
        self.chain_through(nodes, value, NodeApi::AddKernelNode)
    }

    /// (c) The same chain with its nodes added through the generic `cudaGraphAddNode`, as the
    /// Rust crate adds them.
    pub fn chain_via_add_node(&self, nodes: u32, value: u32) -> Result<TwinChain<'_>> {
        self.chain_through(nodes, value, NodeApi::AddNode)
    }

    /// The chains of programmatic dependent launch (`twin_pdl.cu`): `nodes` one-thread nodes,
    /// empty or `*counter += 1` (`rmw`), joined by plain or programmatic edges, added with
    /// `cudaGraphAddNode` and edge data; replayed like [`chain`](Self::chain)'s.
    pub fn pdl_chain(&self, rmw: bool, programmatic: bool, nodes: u32) -> Result<TwinChain<'_>> {
        let nodes = c_count("nodes", nodes)?;
        let mut raw = ptr::null_mut();
        // SAFETY: the session is alive and outlives the chain (borrowed by it); `raw` is a
        // valid out-pointer; the flags are 0 or 1.
        check(
            unsafe {
                twin_pdl_chain_create(
                    self.raw.as_ptr(),
                    c_int::from(rmw),
                    c_int::from(programmatic),
                    nodes,
                    &mut raw,
                )
            },
            "twin_pdl_chain_create",
        )?;
        let raw = non_null(raw, "twin_pdl_chain_create")?;
        Ok(TwinChain { raw, session: self })
    }

    fn chain_through(&self, nodes: u32, value: u32, api: NodeApi) -> Result<TwinChain<'_>> {
        let nodes = c_count("nodes", nodes)?;
        let mut raw = ptr::null_mut();
        // SAFETY: the session is alive and outlives the chain (borrowed by it); `raw` is a
        // valid out-pointer; `api` is 0 or 1, the two values twin.cu knows.
        check(
            unsafe { twin_chain_create(self.raw.as_ptr(), nodes, value, api as c_int, &mut raw) },
            "twin_chain_create",
        )?;
        let raw = non_null(raw, "twin_chain_create")?;
        Ok(TwinChain { raw, session: self })
    }

    /// (d) One sample of the host-driven loop of `steps` steps: (µs per step, counter). The
    /// flag comes back by a copy, or, `mapped`, is read in place from mapped host memory.
    pub fn loop_host(&self, steps: u32, mapped: bool) -> Result<(f64, u32)> {
        let steps = c_count("steps", steps)?;
        let (mut us, mut counter) = (0.0, 0);
        check(
            // SAFETY: the session is alive; both out-pointers are valid.
            unsafe { twin_loop_host(self.raw.as_ptr(), steps, c_int::from(mapped), &mut us, &mut counter) },
            "twin_loop_host",
        )?;
        Ok((us, counter))
    }

    /// (d) The graph of one WHILE node running `steps` steps per launch.
    pub fn while_graph(&self, steps: u32) -> Result<TwinLoop<'_>> {
        self.loop_graph(LoopKind::While, steps)
    }

    /// (g) The device-launch graph of one kernel that tail-relaunches its own graph until it
    /// has run `steps` steps (plain CUDA: `cudaGraphLaunch(cudaGetCurrentGraphExec(),
    /// cudaStreamGraphTailLaunch)`, the result checked).
    pub fn self_relaunch_graph(&self, steps: u32) -> Result<TwinLoop<'_>> {
        self.loop_graph(LoopKind::SelfRelaunch, steps)
    }

    fn loop_graph(&self, kind: LoopKind, steps: u32) -> Result<TwinLoop<'_>> {
        let steps = c_count("steps", steps)?;
        let mut raw = ptr::null_mut();
        // SAFETY: the session is alive and outlives the graph (borrowed); `raw` is valid;
        // `kind` is 0 or 1, the two values twin.cu knows.
        check(
            unsafe { twin_loop_create(self.raw.as_ptr(), kind as c_int, steps, &mut raw) },
            "twin_loop_create",
        )?;
        Ok(TwinLoop { raw: non_null(raw, "twin_loop_create")?, session: self })
    }

    /// (f) A work graph of `width` independent `bench_count` nodes, its host exec, its
    /// device-launch exec and a scheduler graph per device mode, each uploaded; every sample
    /// runs `iters` iterations.
    pub fn width_graphs(&self, width: u32, iters: u32) -> Result<TwinWidth<'_>> {
        let (width, iters) = (c_count("width", width)?, c_count("iterations", iters)?);
        let mut raw = ptr::null_mut();
        // SAFETY: the session is alive and outlives the graphs (borrowed); `raw` is valid.
        check(unsafe { twin_width_create(self.raw.as_ptr(), width, iters, &mut raw) }, "twin_width_create")?;
        Ok(TwinWidth { raw: non_null(raw, "twin_width_create")?, session: self })
    }

    /// (e) One launch of the CDP parent launching `children` children: (µs per child, counter).
    pub fn cdp_device(&self, children: u32) -> Result<(f64, u32)> {
        let children = c_count("children", children)?;
        let (mut us, mut counter) = (0.0, 0);
        // SAFETY: the session is alive; both out-pointers are valid.
        check(
            unsafe { twin_cdp_device(self.raw.as_ptr(), children, &mut us, &mut counter) },
            "twin_cdp_device",
        )?;
        Ok((us, counter))
    }

    /// (e) `children` host launches of the child kernel: (µs per child, counter).
    pub fn cdp_host(&self, children: u32) -> Result<(f64, u32)> {
        let children = c_count("children", children)?;
        let (mut us, mut counter) = (0.0, 0);
        // SAFETY: the session is alive; both out-pointers are valid.
        check(unsafe { twin_cdp_host(self.raw.as_ptr(), children, &mut us, &mut counter) }, "twin_cdp_host")?;
        Ok((us, counter))
    }
}

impl Drop for Twin {
    fn drop(&mut self) {
        // SAFETY: the session is owned and destroyed once; chains, loops and width graphs
        // borrow it, so they are gone already.
        record_release(unsafe { twin_session_destroy(self.raw.as_ptr()) }, "twin_session_destroy");
    }
}

/// A twin chain graph and its exec (`TwinChain`).
pub struct TwinChain<'s> {
    raw: NonNull<RawChain>,
    session: &'s Twin,
}

impl TwinChain<'_> {
    /// (b) One sample of `replays` launches: (µs per node, counter).
    pub fn replay(&self, replays: u32) -> Result<(f64, u32)> {
        let replays = c_count("replays", replays)?;
        let (mut us, mut counter) = (0.0, 0);
        // SAFETY: session and chain are alive; both out-pointers are valid.
        check(
            unsafe {
                twin_chain_replay(
                    self.session.raw.as_ptr(),
                    self.raw.as_ptr(),
                    replays,
                    &mut us,
                    &mut counter,
                )
            },
            "twin_chain_replay",
        )?;
        Ok((us, counter))
    }

    /// (c) One instantiation of the chain's graph: host µs.
    pub fn instantiate(&self) -> Result<f64> {
        let mut us = 0.0;
        // SAFETY: the chain is alive; `us` is a valid out-pointer.
        check(unsafe { twin_chain_instantiate(self.raw.as_ptr(), &mut us) }, "twin_chain_instantiate")?;
        Ok(us)
    }

    /// (c) One whole-graph update of this chain's exec from `from`'s graph: host µs.
    pub fn update_from(&self, from: &TwinChain<'_>) -> Result<f64> {
        let mut us = 0.0;
        // SAFETY: both chains are alive; `us` is a valid out-pointer. Updating an exec from
        // its own graph is allowed.
        check(
            unsafe { twin_chain_update(self.raw.as_ptr(), from.raw.as_ptr(), &mut us) },
            "twin_chain_update",
        )?;
        Ok(us)
    }
}

impl Drop for TwinChain<'_> {
    fn drop(&mut self) {
        // SAFETY: the chain is owned and destroyed once.
        record_release(unsafe { twin_chain_destroy(self.raw.as_ptr()) }, "twin_chain_destroy");
    }
}

/// A twin loop graph and its exec (`TwinLoop`): a WHILE node (d) or a self-relaunching
/// kernel (g); one launch runs the loop to the end.
pub struct TwinLoop<'s> {
    raw: NonNull<RawLoop>,
    session: &'s Twin,
}

impl TwinLoop<'_> {
    /// (d, g) One launch: (µs per step, counter). A refused self-relaunch is an error.
    pub fn run(&self) -> Result<(f64, u32)> {
        let (mut us, mut counter) = (0.0, 0);
        // SAFETY: session and graph are alive; both out-pointers are valid.
        check(
            unsafe { twin_loop_run(self.session.raw.as_ptr(), self.raw.as_ptr(), &mut us, &mut counter) },
            "twin_loop_run",
        )?;
        Ok((us, counter))
    }
}

impl Drop for TwinLoop<'_> {
    fn drop(&mut self) {
        // SAFETY: the graph is owned and destroyed once.
        record_release(unsafe { twin_loop_destroy(self.raw.as_ptr()) }, "twin_loop_destroy");
    }
}

/// What one (f) sample of the twin left.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WidthSample {
    /// µs per iteration.
    pub us: f64,
    /// The counter: width × iterations when every node ran.
    pub counter: u32,
    /// Iterations run: the host loop's, or the device scheduler's step count.
    pub steps: u32,
}

/// The twin's graphs of one width (`TwinWidth`).
pub struct TwinWidth<'s> {
    raw: NonNull<RawWidth>,
    session: &'s Twin,
}

impl TwinWidth<'_> {
    /// (f) One sample in `mode` (`BENCH_MODE_*` of bench_kernels.cuh). A device-side launch
    /// that was refused is an error with its CUDA code.
    pub fn run(&self, mode: u32) -> Result<WidthSample> {
        let mut sample = WidthSample { us: 0.0, counter: 0, steps: 0 };
        // SAFETY: session and graphs are alive; the three out-pointers are valid; twin.cu
        // refuses a mode it does not know.
        check(
            unsafe {
                twin_width_run(
                    self.session.raw.as_ptr(),
                    self.raw.as_ptr(),
                    mode,
                    &mut sample.us,
                    &mut sample.counter,
                    &mut sample.steps,
                )
            },
            "twin_width_run",
        )?;
        Ok(sample)
    }
}

impl Drop for TwinWidth<'_> {
    fn drop(&mut self) {
        // SAFETY: the graphs are owned and destroyed once.
        record_release(unsafe { twin_width_destroy(self.raw.as_ptr()) }, "twin_width_destroy");
    }
}
