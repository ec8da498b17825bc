//! A group of collectives queued together (`ncclGroupStart` … `ncclGroupEnd`): how one
//! thread drives every GPU of the host, each rank's collective on its own stream.

use std::collections::HashMap;
use std::ffi::c_void;
use std::marker::PhantomData;

use cuda_graph::memory::{queue_raw_work, RawWork};
use cuda_graph::{CudaError, Device, DeviceBuffer, KeepAlive, Result, Stream};
use cudarc::nccl::sys;

use crate::comm::{restore_current, Communicator};
use crate::library::{check, loaded};
use crate::types::{NcclType, ReduceOp};

/// Which collective an [`Op`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    AllReduce,
    Broadcast,
    Reduce,
    AllGather,
    ReduceScatter,
}

/// What every rank of a clique must agree on, for one collective.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Shape {
    kind: Kind,
    /// NCCL's count: elements per rank (all-gather: sent; reduce-scatter: received).
    count: usize,
    dtype: &'static str,
    op: Option<ReduceOp>,
    root: Option<usize>,
}

impl Shape {
    fn of<T: NcclType>(kind: Kind, count: usize, op: Option<ReduceOp>, root: Option<usize>) -> Shape {
        Shape { kind, count, dtype: T::NAME, op, root }
    }
}

/// One collective of a group, its buffers' addresses and their owners.
struct Op<'a> {
    comm: &'a Communicator,
    stream: &'a Stream,
    shape: Shape,
    raw_type: sys::ncclDataType_t,
    send: *const c_void,
    recv: *mut c_void,
    owners: Vec<KeepAlive>,
}

/// Collectives queued together: NCCL starts them as one (`ncclGroupStart`, the calls,
/// `ncclGroupEnd`), which is how one thread drives several ranks without deadlock. Each
/// collective runs on its communicator's device, on `stream` (a stream of that device), with
/// buffers of that device; the group borrows the buffers until [`launch`](Self::launch).
///
/// Before NCCL sees anything, [`launch`](Self::launch) checks that the ranks of one clique
/// present in the group issue the same collectives in the same order (kind, count, element
/// type, operation, root): mismatches make NCCL hang or fail, here they are an error naming
/// both ranks. Like this crate's stream operations, the buffers stay alive until the
/// collectives are done (their drop waits where the free would not be ordered after them),
/// and a capture of `cuda-graph` on the streams records them into its graph, which then keeps
/// the buffers and the communicator alive.
///
/// ```no_run
/// use cuda_graph::{DeviceBuffer, Stream};
/// use cuda_graph_nccl::{Communicator, Group, ReduceOp};
/// let comms = Communicator::init_all()?;
/// let streams = comms.iter().map(|c| Stream::new_on(c.device())).collect::<Result<Vec<_>, _>>()?;
/// let mut data = comms.iter().map(|c| DeviceBuffer::from_slice_on(c.device(), &[c.rank() as f32; 4])).collect::<Result<Vec<_>, _>>()?;
/// let mut group = Group::new();
/// for ((comm, stream), buffer) in comms.iter().zip(&streams).zip(&mut data) {
///     group.all_reduce_in_place(comm, buffer, ReduceOp::Sum, stream)?;
/// }
/// group.launch()?;
/// for stream in &streams { stream.synchronize()?; }
/// let n = comms.len() as f32;
/// assert_eq!(data[0].to_vec()?, vec![n * (n - 1.0) / 2.0; 4]);
/// # Ok::<(), cuda_graph::CudaError>(())
/// ```
#[derive(Default)]
pub struct Group<'a> {
    ops: Vec<Op<'a>>,
    _borrows: PhantomData<&'a mut ()>,
}

impl<'a> Group<'a> {
    /// An empty group.
    pub fn new() -> Group<'a> {
        Group::default()
    }

    /// How many collectives the group holds.
    pub fn len(&self) -> usize {
        self.ops.len()
    }

    /// True when the group holds none.
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }

    /// Adds an all-reduce (`ncclAllReduce`): every rank's `recv` gets `op` of all ranks'
    /// `send`. Lengths must match.
    pub fn all_reduce<T: NcclType>(
        &mut self, comm: &'a Communicator, send: &'a DeviceBuffer<T>, recv: &'a mut DeviceBuffer<T>,
        op: ReduceOp, stream: &'a Stream,
    ) -> Result<()> {
        let shape = Shape::of::<T>(Kind::AllReduce, send.len(), Some(op), None);
        self.push::<T>(comm, stream, shape, (send, send.len()), Some((&*recv, send.len())))
    }

    /// Adds an in-place all-reduce: `data` becomes `op` of all ranks' `data`.
    pub fn all_reduce_in_place<T: NcclType>(
        &mut self, comm: &'a Communicator, data: &'a mut DeviceBuffer<T>, op: ReduceOp, stream: &'a Stream,
    ) -> Result<()> {
        let shape = Shape::of::<T>(Kind::AllReduce, data.len(), Some(op), None);
        self.push::<T>(comm, stream, shape, (&*data, data.len()), None)
    }

    /// Adds an in-place broadcast (`ncclBroadcast`): every rank's `data` becomes rank
    /// `root`'s.
    pub fn broadcast_in_place<T: NcclType>(
        &mut self, comm: &'a Communicator, data: &'a mut DeviceBuffer<T>, root: usize, stream: &'a Stream,
    ) -> Result<()> {
        let shape = Shape::of::<T>(Kind::Broadcast, data.len(), None, Some(root));
        self.push::<T>(comm, stream, shape, (&*data, data.len()), None)
    }

    /// Adds a reduce (`ncclReduce`): rank `root`'s `recv` gets `op` of all ranks' `send`
    /// (other ranks' `recv` is left as it is). Lengths must match.
    pub fn reduce<T: NcclType>(
        &mut self, comm: &'a Communicator, send: &'a DeviceBuffer<T>, recv: &'a mut DeviceBuffer<T>,
        op: ReduceOp, root: usize, stream: &'a Stream,
    ) -> Result<()> {
        let shape = Shape::of::<T>(Kind::Reduce, send.len(), Some(op), Some(root));
        self.push::<T>(comm, stream, shape, (send, send.len()), Some((&*recv, send.len())))
    }

    /// Adds an all-gather (`ncclAllGather`): `recv` (ranks × `send.len()` elements) gets every
    /// rank's `send`, in rank order.
    pub fn all_gather<T: NcclType>(
        &mut self, comm: &'a Communicator, send: &'a DeviceBuffer<T>, recv: &'a mut DeviceBuffer<T>,
        stream: &'a Stream,
    ) -> Result<()> {
        let shape = Shape::of::<T>(Kind::AllGather, send.len(), None, None);
        let total = send.len().saturating_mul(comm.size());
        self.push::<T>(comm, stream, shape, (send, send.len()), Some((&*recv, total)))
    }

    /// Adds a reduce-scatter (`ncclReduceScatter`): rank `r`'s `recv` gets `op` over all ranks
    /// of block `r` of `send` (ranks × `recv.len()` elements).
    pub fn reduce_scatter<T: NcclType>(
        &mut self, comm: &'a Communicator, send: &'a DeviceBuffer<T>, recv: &'a mut DeviceBuffer<T>,
        op: ReduceOp, stream: &'a Stream,
    ) -> Result<()> {
        let shape = Shape::of::<T>(Kind::ReduceScatter, recv.len(), Some(op), None);
        let total = recv.len().saturating_mul(comm.size());
        self.push::<T>(comm, stream, shape, (send, total), Some((&*recv, recv.len())))
    }

    /// Checks one collective's devices and lengths and records it. `send` is the buffer read
    /// and the length it must have; `recv` likewise for the buffer written (`None`: in place).
    fn push<T: NcclType>(
        &mut self, comm: &'a Communicator, stream: &'a Stream, shape: Shape, send: (&DeviceBuffer<T>, usize),
        recv: Option<(&DeviceBuffer<T>, usize)>,
    ) -> Result<()> {
        let call = shape.kind.call();
        let device = comm.device();
        expect_device(call, device, stream.device(), "the stream")?;
        expect_device(call, device, send.0.device(), "the send buffer")?;
        expect_len(call, "send", send.0.len(), send.1)?;
        if let Some((recv, len)) = recv {
            expect_device(call, device, recv.device(), "the receive buffer")?;
            expect_len(call, "receive", recv.len(), len)?;
        }
        if let Some(root) = shape.root.filter(|&root| root >= comm.size()) {
            return Err(CudaError::InvalidArgument {
                call,
                problem: format!("root {root} is not a rank: the clique has {}", comm.size()),
            });
        }
        let target = recv.map_or(send.0, |(recv, _)| recv);
        let mut owners = vec![send.0.keep_alive(), comm.handle.clone() as KeepAlive];
        if recv.is_some() {
            owners.push(target.keep_alive());
        }
        self.ops.push(Op {
            comm,
            stream,
            shape,
            raw_type: T::TYPE,
            send: send.0.as_raw(),
            recv: target.as_raw(),
            owners,
        });
        Ok(())
    }

    /// Queues every collective of the group (`ncclGroupStart`, each call, `ncclGroupEnd`) and
    /// returns once NCCL has queued them; the results are there when the streams reach them.
    /// The thread's current device is the same afterwards.
    pub fn launch(self) -> Result<()> {
        const CALL: &str = "nccl::Group::launch";
        if self.ops.is_empty() {
            return Ok(());
        }
        loaded(CALL)?;
        self.check_ranks_agree()?;
        let parts: Vec<RawWork<'_>> =
            self.ops.iter().map(|op| RawWork::new(op.stream, op.owners.clone())).collect();
        let before = Device::current()?;
        let queued = queue_raw_work(CALL, &parts, || {
            // SAFETY: NCCL is loaded; a group only defers the calls that follow.
            check(unsafe { sys::ncclGroupStart() }, "ncclGroupStart", None)?;
            let mut result = self.ops.iter().try_for_each(Op::queue);
            // Always ended, also after a failed call (NCCL then reports the group's error).
            // SAFETY: matches the ncclGroupStart above.
            let ended = check(unsafe { sys::ncclGroupEnd() }, "ncclGroupEnd", None);
            result = result.and(ended);
            result
        });
        restore_current(before)?;
        queued
    }

    /// Refuses ranks of one clique that issue different collectives (see [`Group`]).
    fn check_ranks_agree(&self) -> Result<()> {
        let mut per_rank: HashMap<(u64, usize), Vec<Shape>> = HashMap::new();
        for op in &self.ops {
            per_rank.entry((op.comm.clique(), op.comm.rank())).or_default().push(op.shape);
        }
        let mut first_of_clique: HashMap<u64, (usize, &Vec<Shape>)> = HashMap::new();
        let mut ranks: Vec<_> = per_rank.iter().collect();
        ranks.sort_by_key(|((clique, rank), _)| (*clique, *rank));
        for ((clique, rank), shapes) in ranks {
            let (first, expected) = *first_of_clique.entry(*clique).or_insert((*rank, shapes));
            if shapes != expected {
                return Err(CudaError::InvalidArgument {
                    call: "nccl::Group::launch",
                    problem: format!(
                        "ranks {first} and {rank} of one clique issue different collectives: {expected:?} vs \
                         {shapes:?} (every rank must issue the same ones, in the same order)"
                    ),
                });
            }
        }
        Ok(())
    }
}

impl Op<'_> {
    /// Queues this collective (inside the group).
    fn queue(&self) -> Result<()> {
        let comm = self.comm.handle.raw;
        let stream = self.stream.as_raw().cast::<sys::CUstream_st>();
        let Shape { kind, count, op, root, .. } = self.shape;
        let op = op.unwrap_or(ReduceOp::Sum).raw();
        let root = root.unwrap_or(0) as i32;
        let (send, recv, t) = (self.send, self.recv, self.raw_type);
        // Every arm: NCCL is loaded; `comm` is this rank's live communicator (kept by
        // `owners`, as are both buffers, which live on the communicator's device and were
        // checked in `push` to hold what this collective reads and writes for `count` and
        // the clique's size); `stream` is a live stream of that device; what NCCL queues is
        // kept alive and ordered by `queue_raw_work` (the caller).
        let status = match kind {
            // SAFETY: see above.
            Kind::AllReduce => unsafe { sys::ncclAllReduce(send, recv, count, t, op, comm, stream) },
            // SAFETY: see above.
            Kind::Broadcast => unsafe { sys::ncclBroadcast(send, recv, count, t, root, comm, stream) },
            // SAFETY: see above.
            Kind::Reduce => unsafe { sys::ncclReduce(send, recv, count, t, op, root, comm, stream) },
            // SAFETY: see above.
            Kind::AllGather => unsafe { sys::ncclAllGather(send, recv, count, t, comm, stream) },
            // SAFETY: see above.
            Kind::ReduceScatter => unsafe { sys::ncclReduceScatter(send, recv, count, t, op, comm, stream) },
        };
        check(status, kind.call(), Some(comm))
    }
}

impl Kind {
    fn call(self) -> &'static str {
        match self {
            Kind::AllReduce => "ncclAllReduce",
            Kind::Broadcast => "ncclBroadcast",
            Kind::Reduce => "ncclReduce",
            Kind::AllGather => "ncclAllGather",
            Kind::ReduceScatter => "ncclReduceScatter",
        }
    }
}

fn expect_device(call: &'static str, comm: Device, other: Device, what: &str) -> Result<()> {
    if comm == other {
        return Ok(());
    }
    Err(CudaError::InvalidArgument {
        call,
        problem: format!(
            "the communicator's rank runs on device {} and {what} belongs to device {}",
            comm.ordinal(),
            other.ordinal()
        ),
    })
}

fn expect_len(call: &'static str, which: &str, have: usize, want: usize) -> Result<()> {
    if have == want {
        return Ok(());
    }
    Err(CudaError::InvalidArgument {
        call,
        problem: format!("the {which} buffer has {have} elements; this collective needs {want}"),
    })
}
