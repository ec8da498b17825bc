//! A group of collectives queued together (`ncclGroupStart` … `ncclGroupEnd`): how one
//! thread drives every GPU of the host, each rank's collective on its own stream.

use std::collections::HashMap;
use std::ffi::c_void;
use std::marker::PhantomData;
use std::time::Duration;

use cuda_graph::memory::{queue_raw_work, RawWork};
use cuda_graph::refusal::{Bounds, DevicePair, Lengths};
use cuda_graph::{CudaError, Device, DeviceBuffer, KeepAlive, Refusal, Result, Stream};
use cudarc::nccl::sys;

use crate::agreement::{CliqueLog, Kind, RankRun, Shape, Waves};
use crate::comm::{restore_current, Communicator};
use crate::library::{check, loaded};
use crate::nonblocking::wait_ready;
use crate::types::{NcclType, ReduceOp};

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
/// # Ranks must agree
/// Before NCCL sees anything, [`launch`](Self::launch) checks that every rank of each clique
/// issues the same collectives in the same order (kind, count, element type, operation,
/// root): mismatches make NCCL hang or fail, here they are an error naming both ranks. The
/// ranks the group holds are compared with each other; ranks that other groups hold (a
/// thread per GPU) through the clique's shared log, the launch waiting until they have
/// launched their matching collectives or the clique's
/// [agreement timeout](Communicator::set_agreement_timeout) passes. A group holding every
/// rank never waits. A mismatch between groups or a timeout leaves the ranks out of step: the
/// clique then refuses every later collective (the crate docs, "Ranks must agree", say what
/// still reaches NCCL).
///
/// Like this crate's stream operations, the buffers stay alive until the
/// collectives are done (their drop waits where the free would not be ordered after them),
/// and a capture of `cuda-graph` on the streams records them into its graph, which then keeps
/// the buffers and the communicator alive.
///
/// One thread driving every GPU:
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
///
/// A thread per GPU, each with its own group: each launch waits for the other ranks' matching
/// broadcast, and a broadcast of another length on any rank would be `Err` on every thread.
///
/// ```no_run
/// use cuda_graph::{DeviceBuffer, Stream};
/// use cuda_graph_nccl::{Communicator, Group};
/// let threads: Vec<_> = Communicator::init_all()?
///     .into_iter()
///     .map(|comm| {
///         std::thread::spawn(move || -> cuda_graph::Result<Vec<u32>> {
///             let stream = Stream::new_on(comm.device())?;
///             let mut data = DeviceBuffer::from_slice_on(comm.device(), &[comm.rank() as u32; 256])?;
///             let mut group = Group::new();
///             group.broadcast_in_place(&comm, &mut data, 0, &stream)?;
///             group.launch()?;
///             stream.synchronize()?;
///             data.to_vec()
///         })
///     })
///     .collect();
/// for thread in threads {
///     assert_eq!(thread.join().unwrap()?, vec![0; 256]);
/// }
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
                reason: Bounds::NotARank { root, size: comm.size() }.into(),
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
    ///
    /// First the ranks of each clique are compared (see [`Group`], "Ranks must agree"): a
    /// group that holds only some ranks of a clique waits here until the others have launched
    /// their matching collectives, up to the clique's
    /// [agreement timeout](Communicator::set_agreement_timeout). While it waits, it hands NCCL
    /// each collective as soon as every rank has launched it (a rank that launches its
    /// collectives one group each may need this one inside NCCL before it can launch its
    /// next), so its collectives then reach NCCL in more than one NCCL group; a group that
    /// waits for nobody is one NCCL group, as before. `Err` when the ranks disagree or do not
    /// come in time; the collectives every rank agreed on before the first one that was not
    /// are queued all the same (the error says how many), so that no rank's stream waits for a
    /// partner that never comes.
    pub fn launch(self) -> Result<()> {
        const CALL: &str = "nccl::Group::launch";
        if self.ops.is_empty() {
            return Ok(());
        }
        // Before the agreement log sees anything: a launch refused later (inside a host
        // function every CUDA call is) would leave the other ranks' agreed collectives waiting
        // on the device for this rank.
        if cuda_graph::in_host_function() {
            return Err(CudaError::InvalidArgument { call: CALL, reason: Refusal::InHostFunction });
        }
        loaded(CALL)?;
        let refuse = |why: String, queued: Option<(usize, usize)>| CudaError::InvalidArgument {
            call: CALL,
            reason: Refusal::RanksOutOfStep { why, queued },
        };
        if let Some(op) = self.ops.iter().find(|op| op.comm.spans_processes()) {
            return Err(refuse(
                format!(
                    "rank {} of {} belongs to a world that spans processes: this process cannot compare its \
                     collectives with its peers', so Group::launch refuses them; queue them with the unsafe \
                     Group::launch_unchecked, whose contract is that every rank queues the same collectives in the \
                     same order",
                    op.comm.rank(),
                    op.comm.size()
                ),
                None,
            ));
        }
        // A nonblocking communicator of a world of one (`init_rank`) may have been aborted.
        if let Some(op) = self.ops.iter().find(|op| op.comm.handle.is_broken()) {
            return Err(aborted(CALL, op.comm));
        }
        let cliques = self.cliques();
        for (log, runs) in &cliques {
            log.check_together(runs).map_err(|why| refuse(why, None))?;
        }
        // From here on what is presented counts: ranks in other groups may wait for it.
        let mut refusal = None;
        let mut waves = Waves::new();
        let mut presented = 0;
        for (log, runs) in &cliques {
            match log.present(runs) {
                Ok(ticket) => waves.push(ticket),
                Err(problem) => {
                    refusal = Some(problem);
                    break;
                }
            }
            presented += 1;
        }
        // Hand NCCL what every rank agreed on as soon as it is (all of it in one NCCL group
        // when no rank is missing): the first `agreed` collectives of each rank, in the
        // group's order.
        let mut handed: HashMap<(u64, usize), usize> = HashMap::new();
        let mut queued = 0;
        loop {
            let wave = waves.next();
            let mut seen: HashMap<(u64, usize), usize> = HashMap::new();
            let ops: Vec<&Op<'a>> = self
                .ops
                .iter()
                .filter(|op| {
                    let key = (op.comm.log().map_or(0, CliqueLog::id), op.comm.rank());
                    let index = seen.entry(key).or_insert(0);
                    *index += 1;
                    let range =
                        handed.get(&key).copied().unwrap_or(0)..wave.agreed.get(&key).copied().unwrap_or(0);
                    range.contains(&(*index - 1))
                })
                .collect();
            if !ops.is_empty() {
                if let Err(err) = queue(CALL, &ops) {
                    // The other ranks of a clique this group holds only in part may have
                    // queued their share of what was agreed, and would queue what is agreed
                    // later: the clique is out of step. (A clique held whole was agreed at
                    // once, in the first wave: no other group has any of it.)
                    for (log, runs) in &cliques[..presented] {
                        if runs.len() < log.ranks() {
                            let ranks: Vec<String> = runs.iter().map(|run| run.rank.to_string()).collect();
                            log.out_of_step(format!(
                                "rank(s) {} could not queue collectives every rank had agreed on ({err}); the \
                                 other ranks' share may be queued and wait on the device for them",
                                ranks.join(", ")
                            ));
                        }
                    }
                    return Err(err);
                }
                queued += ops.len();
            }
            handed = wave.agreed;
            if wave.last {
                refusal = refusal.or(wave.refusal);
                break;
            }
        }
        match refusal {
            None => Ok(()),
            Some(why) => Err(refuse(why, Some((queued, self.ops.len())))),
        }
    }

    /// Queues every collective of a group of ranks of worlds that span processes
    /// ([`Communicator::spans_processes`], made by [`Communicator::init_rank`] or
    /// [`from_env`](Communicator::from_env)), as [`launch`](Self::launch) does but without
    /// comparing the ranks: this process cannot see its peers. The thread's current device is
    /// the same afterwards. A group holding a communicator of a one-process world is refused
    /// (`launch` checks those); so is one whose communicator was aborted.
    ///
    /// The communicators are nonblocking: when NCCL still has the group in progress after
    /// the communicator's timeout (a peer that never comes to its first collective, whose
    /// connections NCCL makes then), it is `Err`, and the communicator is aborted when
    /// dropped and refuses every later launch.
    ///
    /// # Safety
    /// Every rank of each world queues the same collectives, in the same order, with the same
    /// kind, count, element type, operation and root (the crate docs, "Ranks in separate
    /// processes"). NCCL does not check this: ranks that disagree make NCCL hang or move more
    /// data than a rank's buffer holds (writing past it on the device). What this group's
    /// collectives read and write of *this* rank's buffers is checked, as for `launch`.
    ///
    /// ```no_run
    /// use cuda_graph::{DeviceBuffer, Stream};
    /// use cuda_graph_nccl::{Communicator, Group, ReduceOp};
    /// let comm = Communicator::from_env()?; // one process per rank (torchrun, mpirun, srun)
    /// let stream = Stream::new_on(comm.device())?;
    /// let mut data = DeviceBuffer::from_slice_on(comm.device(), &[comm.rank() as f32; 1024])?;
    /// let mut group = Group::new();
    /// group.all_reduce_in_place(&comm, &mut data, ReduceOp::Sum, &stream)?;
    /// // SAFETY: every rank runs this program, which queues this one all-reduce of 1024 f32.
    /// unsafe { group.launch_unchecked()? };
    /// stream.synchronize()?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub unsafe fn launch_unchecked(self) -> Result<()> {
        const CALL: &str = "nccl::Group::launch_unchecked";
        if self.ops.is_empty() {
            return Ok(());
        }
        if cuda_graph::in_host_function() {
            return Err(CudaError::InvalidArgument { call: CALL, reason: Refusal::InHostFunction });
        }
        loaded(CALL)?;
        for op in &self.ops {
            if !op.comm.spans_processes() {
                return Err(CudaError::InvalidArgument {
                    call: CALL,
                    reason: Refusal::RanksOutOfStep {
                        why: format!(
                            "rank {} of {} belongs to a world of this process, whose ranks Group::launch \
                             compares: launch it there",
                            op.comm.rank(),
                            op.comm.size()
                        ),
                        queued: None,
                    },
                });
            }
            if op.comm.handle.is_broken() {
                return Err(aborted(CALL, op.comm));
            }
        }
        let ops: Vec<&Op<'a>> = self.ops.iter().collect();
        queue(CALL, &ops)
    }

    /// Each clique's log and the runs of its ranks in this group, in the order they first
    /// appear.
    fn cliques(&self) -> Vec<(&'a CliqueLog, Vec<RankRun>)> {
        let mut cliques: Vec<(&'a CliqueLog, Vec<RankRun>)> = Vec::new();
        for op in &self.ops {
            let comm: &'a Communicator = op.comm;
            // Ranks of worlds that span processes are refused before this.
            let Some(log) = comm.log() else { continue };
            let runs = match cliques.iter().position(|(known, _)| known.id() == log.id()) {
                Some(index) => &mut cliques[index].1,
                None => {
                    cliques.push((log, Vec::new()));
                    &mut cliques.last_mut().expect("just pushed").1
                }
            };
            match runs.iter_mut().find(|run| run.rank == comm.rank()) {
                Some(run) => run.shapes.push(op.shape),
                None => runs.push(RankRun { rank: comm.rank(), shapes: vec![op.shape] }),
            }
        }
        cliques
    }
}

/// Queues `ops` as one NCCL group, kept alive and ordered by `queue_raw_work`.
fn queue(call: &'static str, ops: &[&Op<'_>]) -> Result<()> {
    let parts: Vec<RawWork<'_>> = ops.iter().map(|op| RawWork::new(op.stream, op.owners.clone())).collect();
    let before = Device::current()?;
    let queued = queue_raw_work(call, &parts, || {
        // SAFETY: NCCL is loaded; a group only defers the calls that follow.
        check(unsafe { sys::ncclGroupStart() }, "ncclGroupStart", None)?;
        let mut result = ops.iter().try_for_each(|op| op.queue());
        // Always ended, also after a failed call (NCCL then reports the group's error).
        // SAFETY: matches the ncclGroupStart above.
        let status = unsafe { sys::ncclGroupEnd() };
        let ended = if status == sys::ncclResult_t::ncclInProgress {
            // Nonblocking communicators (ranks of worlds that span processes): NCCL goes on
            // in the background; the collectives are queued once none is in progress.
            wait_queued(call, ops)
        } else {
            check(status, "ncclGroupEnd", None)
        };
        result = result.and(ended);
        result
    });
    restore_current(before)?;
    queued
}

/// Waits until NCCL has queued the group on every nonblocking communicator of `ops`, each up
/// to its limit; one that is still in progress then is marked broken (aborted when dropped).
fn wait_queued(call: &'static str, ops: &[&Op<'_>]) -> Result<()> {
    let mut seen: Vec<sys::ncclComm_t> = Vec::new();
    for op in ops {
        let handle = &op.comm.handle;
        if seen.contains(&handle.raw) {
            continue;
        }
        seen.push(handle.raw);
        let limit = handle.nonblocking.unwrap_or(Duration::MAX);
        if let Some(waited) = wait_ready(handle.raw, "ncclGroupEnd", limit)? {
            handle.set_broken();
            return Err(CudaError::Library {
                library: "NCCL",
                call,
                code: sys::ncclResult_t::ncclInProgress as i32,
                message: format!(
                    "rank {} of {}: NCCL still had the group in progress after {:.1} s (a peer rank missing or \
                     gone?); the communicator is aborted",
                    op.comm.rank(),
                    op.comm.size(),
                    waited.as_secs_f64()
                ),
            });
        }
    }
    Ok(())
}

/// The refusal of a communicator that was aborted.
fn aborted(call: &'static str, comm: &Communicator) -> CudaError {
    CudaError::Library {
        library: "NCCL",
        call,
        code: sys::ncclResult_t::ncclInProgress as i32,
        message: format!(
            "rank {} of {}: an earlier call of this communicator did not finish in time and it was aborted; \
             make a new one",
            comm.rank(),
            comm.size()
        ),
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
        // kept alive and ordered by `queue_raw_work` (the caller); and every rank of the
        // clique has launched this collective with the same shape at the same place of its
        // order (`launch` hands NCCL only what the clique's agreement log found agreed; for
        // a world that spans processes, `launch_unchecked`'s caller promises it), so no
        // rank's NCCL moves more than `count` elements per rank for it.
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
        if status == sys::ncclResult_t::ncclInProgress && self.comm.handle.nonblocking.is_some() {
            return Ok(()); // a nonblocking communicator: `queue` waits for the group
        }
        check(status, kind.call(), Some(comm))
    }
}

fn expect_device(call: &'static str, comm: Device, other: Device, what: &'static str) -> Result<()> {
    if comm == other {
        return Ok(());
    }
    Err(CudaError::InvalidArgument {
        call,
        reason: Refusal::DevicesDiffer {
            pair: DevicePair::CommunicatorAnd { what },
            first: comm.ordinal(),
            second: other.ordinal(),
        },
    })
}

fn expect_len(call: &'static str, which: &'static str, have: usize, want: usize) -> Result<()> {
    if have == want {
        return Ok(());
    }
    Err(CudaError::InvalidArgument { call, reason: Lengths::CollectiveBuffer { which, have, want }.into() })
}
