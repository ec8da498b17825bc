//! The shape of a graph that picks a parked exec: what makes two device-launch execs
//! interchangeable.

use std::collections::HashMap;
use std::ptr;

use crate::runtime as sys;

use crate::graph::list_nodes;

/// What makes two device-launch execs interchangeable: the device, the instantiate flags, and
/// the graph's shape (node kinds and kernel functions in node order, and the edges between
/// node positions, in edge order).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(in crate::graph) struct PoolKey {
    pub(super) device: i32,
    pub(super) flags: u64,
    pub(super) shape: Vec<u64>,
}

/// A graph's nodes in CUDA's order and the key of its execs.
pub(in crate::graph) struct Shape {
    pub(in crate::graph) nodes: Vec<sys::cudaGraphNode_t>,
    pub(in crate::graph) key: PoolKey,
}

impl Shape {
    /// The instantiate flags the key was made with.
    pub(in crate::graph) fn key_flags(&self) -> u64 {
        self.key.flags
    }
}

/// Reads the shape of `graph` (a live root graph whose family the caller holds). `None` when
/// CUDA cannot say (execs of such graphs are destroyed, not parked).
pub(in crate::graph) fn shape_of(graph: sys::cudaGraph_t, flags: u64) -> Option<Shape> {
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
        // `node` is a node of the live graph the caller holds.
        let kind = crate::driver::node_type(node).ok()?;
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
    // SAFETY: `node` is a live kernel node of the graph the caller holds.
    unsafe { crate::graph::kernel_node::read(node) }.map_or(0, |read| read.function as u64)
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
