//! Property tests on the GPU: random DAGs of kernel, memcpy and memset nodes, each run always
//! or inside a conditional node (IF, one body of a SWITCH, or a WHILE loop of 0 to 3 runs),
//! built through the safe API and run, leave the same buffer contents as a CPU model of the
//! same DAG; and updating an exec to a random graph of the same shape leaves what the model of
//! the new graph says. `PROPTEST_CASES` sets the number of cases (default 500).
//!
//! Nodes that touch the same buffer are always ordered by an edge (each node depends on the
//! last node that touched any buffer it touches, plus random earlier nodes), so the result is
//! that of applying the nodes in order, whatever CUDA runs concurrently.

mod graph_support;

use cuda_graph::graph::{AsNode, Graph, GraphBuilder, HostLaunch, NodeRef};
use cuda_graph::kernel::LaunchConfig;
use cuda_graph::{CudaError, DeviceBuffer};
use gpu_test_support::require_gpu;
use graph_support::stream;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use test_kernels::{add_scalar, fill_pattern, pattern, scale_add_index, set_condition_from, while_step};

const BUFFERS: usize = 3;
const N: u32 = 777;
/// Bodies of a SWITCH node; a value of this or more runs none.
const SWITCH_CASES: usize = 3;
/// The most nodes of a DAG (one WHILE counter each).
const MAX_NODES: usize = 15;

/// One operation on the buffers.
#[derive(Debug, Clone, Copy)]
enum Op {
    Fill { buf: usize, seed: u32 },
    Add { buf: usize, value: u32 },
    ScaleAddIndex { buf: usize, scale: u32 },
    Memset { buf: usize, value: u32 },
    Copy { dst: usize, src: usize },
}

/// How a node's operation runs. A condition comes from the handle's default or, `by_kernel`,
/// from a kernel that reads it from device memory before the conditional node.
#[derive(Debug, Clone, Copy)]
enum Runs {
    Always,
    /// Inside an IF whose condition is `runs`.
    If {
        runs: bool,
        by_kernel: bool,
    },
    /// In body `slot` of a SWITCH of `SWITCH_CASES` bodies (the others empty) whose value is
    /// `value`: it runs when they are equal.
    Switch {
        slot: usize,
        value: u32,
        by_kernel: bool,
    },
    /// In a WHILE body with `while_step`, which ends the loop after `times` runs (0: the
    /// handle's default is 0 and the body never runs).
    While {
        times: u32,
    },
}

impl Runs {
    /// How many times the operation runs in one launch.
    fn times(self) -> u32 {
        match self {
            Runs::Always => 1,
            Runs::If { runs, .. } => u32::from(runs),
            Runs::Switch { slot, value, .. } => u32::from(value as usize == slot),
            Runs::While { times } => times,
        }
    }
}

/// A node: an operation, how it runs, and random extra dependencies on earlier nodes.
#[derive(Debug, Clone)]
struct NodeSpec {
    op: Op,
    runs: Runs,
    extra_deps: Vec<prop::sample::Index>,
}

fn op() -> impl Strategy<Value = Op> {
    let buf = 0..BUFFERS;
    prop_oneof![
        (buf.clone(), any::<u32>()).prop_map(|(buf, seed)| Op::Fill { buf, seed }),
        (buf.clone(), any::<u32>()).prop_map(|(buf, value)| Op::Add { buf, value }),
        (buf.clone(), 0u32..7).prop_map(|(buf, scale)| Op::ScaleAddIndex { buf, scale }),
        (buf.clone(), any::<u32>()).prop_map(|(buf, value)| Op::Memset { buf, value }),
        (buf.clone(), buf)
            .prop_filter("distinct buffers", |(d, s)| d != s)
            .prop_map(|(dst, src)| Op::Copy { dst, src }),
    ]
}

fn runs() -> impl Strategy<Value = Runs> {
    prop_oneof![
        6 => Just(Runs::Always),
        2 => (any::<bool>(), any::<bool>()).prop_map(|(runs, by_kernel)| Runs::If { runs, by_kernel }),
        1 => (0..SWITCH_CASES, 0..=SWITCH_CASES as u32, any::<bool>())
            .prop_map(|(slot, value, by_kernel)| Runs::Switch { slot, value, by_kernel }),
        1 => (0u32..4).prop_map(|times| Runs::While { times }),
    ]
}

fn node() -> impl Strategy<Value = NodeSpec> {
    (op(), runs(), prop::collection::vec(any::<prop::sample::Index>(), 0..3))
        .prop_map(|(op, runs, extra_deps)| NodeSpec { op, runs, extra_deps })
}

fn dag() -> impl Strategy<Value = Vec<NodeSpec>> {
    prop::collection::vec(node(), 1..=MAX_NODES)
}

fn touched(op: Op) -> Vec<usize> {
    match op {
        Op::Fill { buf, .. }
        | Op::Add { buf, .. }
        | Op::ScaleAddIndex { buf, .. }
        | Op::Memset { buf, .. } => vec![buf],
        Op::Copy { dst, src } => vec![dst, src],
    }
}

/// The CPU model: the nodes applied in order, each as many times as its condition runs it.
fn model(nodes: &[NodeSpec], start: &[Vec<u32>]) -> Vec<Vec<u32>> {
    let mut bufs = start.to_vec();
    for node in nodes {
        for _ in 0..node.runs.times() {
            apply(node.op, &mut bufs);
        }
    }
    bufs
}

/// One operation on the model's buffers.
fn apply(op: Op, bufs: &mut [Vec<u32>]) {
    match op {
        Op::Fill { buf, seed } => {
            bufs[buf].iter_mut().enumerate().for_each(|(i, v)| *v = pattern(i as u32, seed))
        }
        Op::Add { buf, value } => bufs[buf].iter_mut().for_each(|v| *v = v.wrapping_add(value)),
        Op::ScaleAddIndex { buf, scale } => bufs[buf]
            .iter_mut()
            .enumerate()
            .for_each(|(i, v)| *v = v.wrapping_mul(scale).wrapping_add(i as u32)),
        Op::Memset { buf, value } => bufs[buf].iter_mut().for_each(|v| *v = value),
        Op::Copy { dst, src } => bufs[dst] = bufs[src].clone(),
    }
}

/// Device memory for one case: the buffers, the values conditions are read from (`values[v]`
/// holds v), and one WHILE step counter per node.
struct Buffers {
    data: Vec<DeviceBuffer<u32>>,
    values: DeviceBuffer<u32>,
    counters: DeviceBuffer<u32>,
}

impl Buffers {
    fn new(start: &[Vec<u32>]) -> Result<Buffers, CudaError> {
        let data = start.iter().map(|b| DeviceBuffer::from_slice(b)).collect::<Result<_, _>>()?;
        let values: Vec<u32> = (0..=SWITCH_CASES as u32).collect();
        Ok(Buffers {
            data,
            values: DeviceBuffer::from_slice(&values)?,
            counters: DeviceBuffer::zeroed(MAX_NODES)?,
        })
    }

    fn reset(&mut self, start: &[Vec<u32>]) -> Result<(), CudaError> {
        self.data.iter_mut().zip(start).try_for_each(|(d, s)| d.copy_from_host(s))
    }

    fn read(&self) -> Result<Vec<Vec<u32>>, CudaError> {
        self.data.iter().map(|b| b.to_vec()).collect()
    }
}

fn add_op(builder: &GraphBuilder, op: Op, bufs: &Buffers, deps: &[NodeRef]) -> Result<NodeRef, CudaError> {
    let deps: Vec<&dyn AsNode> = deps.iter().map(|d| d as _).collect();
    let config = LaunchConfig::for_elements(N, 128);
    let ptr = |buf: usize| bufs.data[buf].ptr();
    Ok(match op {
        Op::Fill { buf, seed } => {
            builder.add_kernel(fill_pattern(), config, (ptr(buf), N, seed), &deps)?.as_node()
        }
        Op::Add { buf, value } => {
            builder.add_kernel(add_scalar(), config, (ptr(buf), N, value), &deps)?.as_node()
        }
        Op::ScaleAddIndex { buf, scale } => {
            builder.add_kernel(scale_add_index(), config, (ptr(buf), N, scale), &deps)?.as_node()
        }
        Op::Memset { buf, value } => builder.add_memset(&ptr(buf), value, N as usize, &deps)?.as_node(),
        Op::Copy { dst, src } => builder.add_memcpy(&ptr(dst), &ptr(src), N as usize, &deps)?.as_node(),
    })
}

/// Builds the DAG: each node after the last toucher of its buffers and its random extras.
fn build(nodes: &[NodeSpec], bufs: &Buffers) -> Result<Graph, CudaError> {
    let graph = Graph::new()?;
    let mut added: Vec<NodeRef> = Vec::new();
    let mut last_toucher: [Option<usize>; BUFFERS] = [None; BUFFERS];
    for spec in nodes {
        // Dependencies by creation index: cudaGraphExecUpdate compares their order too.
        let mut dep_indices: Vec<usize> = touched(spec.op).iter().filter_map(|&b| last_toucher[b]).collect();
        if !added.is_empty() {
            dep_indices.extend(spec.extra_deps.iter().map(|ix| ix.index(added.len())));
        }
        dep_indices.sort_unstable();
        dep_indices.dedup();
        let deps: Vec<NodeRef> = dep_indices.iter().map(|&i| added[i]).collect();
        let node = add_node(&graph, spec, added.len(), bufs, &deps)?;
        for b in touched(spec.op) {
            last_toucher[b] = Some(added.len());
        }
        added.push(node);
    }
    Ok(graph)
}

/// Adds `spec` as node number `index` after `deps`: the operation itself, or the conditional
/// node around it (with the kernel that sets its condition, or the reset of its WHILE counter,
/// before it).
fn add_node(
    graph: &Graph, spec: &NodeSpec, index: usize, bufs: &Buffers, deps: &[NodeRef],
) -> Result<NodeRef, CudaError> {
    let mut deps = deps.to_vec();
    let (default, by_kernel) = match spec.runs {
        Runs::Always => return add_op(graph, spec.op, bufs, &deps),
        Runs::If { runs, by_kernel } => (u32::from(runs), by_kernel),
        Runs::Switch { value, by_kernel, .. } => (value, by_kernel),
        Runs::While { times } => (u32::from(times > 0), false),
    };
    let handle = graph.conditional_handle(if by_kernel { None } else { Some(default) })?;
    if by_kernel {
        let value = bufs.values.ptr().offset(default as usize)?;
        let set = graph.add_kernel(set_condition_from(), LaunchConfig::new(1, 1), (handle, value), &[])?;
        deps.push(set.as_node());
    }
    let counter = bufs.counters.ptr().offset(index)?;
    if let Runs::While { .. } = spec.runs {
        let dep_refs: Vec<&dyn AsNode> = deps.iter().map(|d| d as _).collect();
        deps = vec![graph.add_memset(&counter, 0, 1, &dep_refs)?.as_node()];
    }
    let dep_refs: Vec<&dyn AsNode> = deps.iter().map(|d| d as _).collect();
    let conditional = match spec.runs {
        Runs::Always => unreachable!("returned above"),
        Runs::If { .. } => {
            let (conditional, body) = graph.add_if(&handle, &dep_refs)?;
            add_op(&body, spec.op, bufs, &[])?;
            conditional
        }
        Runs::Switch { slot, .. } => {
            let (conditional, bodies) = graph.add_switch(&handle, SWITCH_CASES, &dep_refs)?;
            add_op(&bodies[slot], spec.op, bufs, &[])?;
            conditional
        }
        Runs::While { times } => {
            let (conditional, body) = graph.add_while(&handle, &dep_refs)?;
            let op = add_op(&body, spec.op, bufs, &[])?;
            body.add_kernel(while_step(), LaunchConfig::new(1, 1), (handle, counter, times), &[&op])?;
            conditional
        }
    };
    Ok(conditional.as_node())
}

fn start_values(seed: u32) -> Vec<Vec<u32>> {
    (0..BUFFERS).map(|b| (0..N).map(|i| pattern(i, seed ^ b as u32)).collect()).collect()
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(500)
}

fn fail(err: CudaError) -> TestCaseError {
    TestCaseError::fail(err.to_string())
}

#[test]
fn random_dags_leave_what_the_cpu_model_says() {
    require_gpu!();
    let stream = stream().unwrap();
    let start = start_values(0x5eed);
    let bufs = std::cell::RefCell::new(Buffers::new(&start).unwrap());
    let mut runner = TestRunner::new(Config { cases: cases(), ..Config::default() });
    let outcome = runner.run(&dag(), |nodes| {
        let mut bufs = bufs.borrow_mut();
        bufs.reset(&start).map_err(fail)?;
        let graph = build(&nodes, &bufs).map_err(fail)?;
        let exec = graph.instantiate::<HostLaunch>(Default::default()).map_err(fail)?;
        exec.launch(&stream).map_err(fail)?;
        stream.synchronize().map_err(fail)?;
        prop_assert_eq!(bufs.read().map_err(fail)?, model(&nodes, &start));
        Ok(())
    });
    if let Err(err) = outcome {
        panic!("{err}");
    }
}

/// The same DAG shape with new parameters (kinds, buffers and conditional node kinds kept, so
/// CUDA can update the exec in place): new operation values, new conditions. A rebuilt graph
/// makes its conditional handles in the same order, so its conditional nodes test the handles
/// the exec has.
fn reparameterized(nodes: &[NodeSpec], values: &[u32]) -> Vec<NodeSpec> {
    nodes
        .iter()
        .zip(values.iter().cycle())
        .map(|(spec, &v)| {
            let op = match spec.op {
                Op::Fill { buf, .. } => Op::Fill { buf, seed: v },
                Op::Add { buf, .. } => Op::Add { buf, value: v },
                Op::ScaleAddIndex { buf, .. } => Op::ScaleAddIndex { buf, scale: v % 7 },
                Op::Memset { buf, .. } => Op::Memset { buf, value: v },
                copy @ Op::Copy { .. } => copy,
            };
            let runs = match spec.runs {
                Runs::Always => Runs::Always,
                Runs::If { by_kernel, .. } => Runs::If { runs: v % 2 == 1, by_kernel },
                Runs::Switch { slot, by_kernel, .. } => {
                    Runs::Switch { slot, value: v % (SWITCH_CASES as u32 + 1), by_kernel }
                }
                Runs::While { .. } => Runs::While { times: v % 4 },
            };
            NodeSpec { op, runs, ..spec.clone() }
        })
        .collect()
}

#[test]
fn random_updates_leave_what_the_model_of_the_new_graph_says() {
    require_gpu!();
    let stream = stream().unwrap();
    let start = start_values(0xc0de);
    let bufs = std::cell::RefCell::new(Buffers::new(&start).unwrap());
    let strategy = (dag(), prop::collection::vec(prop::collection::vec(any::<u32>(), 1..8), 1..4));
    let mut runner = TestRunner::new(Config { cases: cases().div_ceil(2), ..Config::default() });
    let outcome = runner.run(&strategy, |(nodes, updates)| {
        let mut bufs = bufs.borrow_mut();
        let nodes = reparameterized(&nodes, &[1]);
        let graph = build(&nodes, &bufs).map_err(fail)?;
        let mut exec = graph.instantiate::<HostLaunch>(Default::default()).map_err(fail)?;
        for values in updates {
            let next = reparameterized(&nodes, &values);
            let next_graph = build(&next, &bufs).map_err(fail)?;
            exec.update(&next_graph).map_err(fail)?;
            bufs.reset(&start).map_err(fail)?;
            exec.launch(&stream).map_err(fail)?;
            stream.synchronize().map_err(fail)?;
            prop_assert_eq!(bufs.read().map_err(fail)?, model(&next, &start));
        }
        Ok(())
    });
    if let Err(err) = outcome {
        panic!("{err}");
    }
}
