//! The agreement log of a clique: every rank's collectives, numbered in the order they are
//! launched (across all groups and threads), compared before NCCL sees them.
//!
//! NCCL requires every rank of a clique to issue the same collectives in the same order;
//! ranks that disagree on a count, an element type, an operation or a root hang NCCL or make
//! it move more data than a buffer holds. Each [`Communicator`](crate::Communicator) of one
//! `init_on` call shares one [`CliqueLog`]. A group launch first compares the ranks it holds
//! with each other ([`CliqueLog::check_together`]: a refusal there records nothing), then
//! presents each rank's collectives ([`CliqueLog::present`]: rank `r`'s next collective is
//! its collective number `presented[r]`), then hands NCCL, wave by wave ([`Waves::next`]),
//! the collectives that every rank has presented with one shape.
//!
//! A group holding every rank of the clique never waits and is one wave: its ranks present
//! together. Ranks driven from separate threads wait for each other, up to the clique's
//! timeout. A mismatch between groups, or a timeout, **poisons** the clique: the collectives
//! before the first one not agreed (`agreed`) still reach NCCL from every rank (their groups
//! hand them on, so no rank waits on the device for a partner that never comes), nothing
//! from `agreed` on ever does, and every later launch is refused at once. Nothing here calls
//! NCCL or CUDA: the unit tests below drive the log from threads without a GPU.

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use crate::types::ReduceOp;

/// How long a [`Group::launch`](crate::Group::launch) waits, by default, for the other ranks
/// of its clique to launch their matching collectives (60 s), before it returns `Err` and the
/// clique refuses every later collective. Set per clique with
/// [`Communicator::set_agreement_timeout`](crate::Communicator::set_agreement_timeout), or for
/// every clique made afterwards with the environment variable
/// [`AGREEMENT_TIMEOUT_VAR`].
///
/// ```
/// use std::time::Duration;
/// assert_eq!(cuda_graph_nccl::DEFAULT_AGREEMENT_TIMEOUT, Duration::from_secs(60));
/// ```
pub const DEFAULT_AGREEMENT_TIMEOUT: Duration = Duration::from_secs(60);

/// The environment variable read by [`Communicator::init_on`](crate::Communicator::init_on)
/// (and `init_all`) for the new clique's agreement timeout, in seconds (`2.5`, `60`, `inf`
/// for no limit); unset: [`DEFAULT_AGREEMENT_TIMEOUT`]. A value that is not a number of
/// seconds makes `init_on` return `Err`.
///
/// ```
/// assert_eq!(cuda_graph_nccl::AGREEMENT_TIMEOUT_VAR, "CUDA_GRAPH_NCCL_AGREEMENT_TIMEOUT");
/// ```
pub const AGREEMENT_TIMEOUT_VAR: &str = "CUDA_GRAPH_NCCL_AGREEMENT_TIMEOUT";

/// The agreement timeout a value of [`AGREEMENT_TIMEOUT_VAR`] names: seconds, not negative;
/// infinite or too large for a `Duration` means no limit (`Duration::MAX`).
pub(crate) fn parse_timeout(text: &str) -> Option<Duration> {
    let seconds: f64 = text.trim().parse().ok()?;
    if seconds.is_nan() || seconds < 0.0 {
        return None;
    }
    Some(Duration::try_from_secs_f64(seconds).unwrap_or(Duration::MAX))
}

/// Which collective a [`Shape`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    AllReduce,
    Broadcast,
    Reduce,
    AllGather,
    ReduceScatter,
}

impl Kind {
    /// NCCL's function for it.
    pub(crate) fn call(self) -> &'static str {
        match self {
            Kind::AllReduce => "ncclAllReduce",
            Kind::Broadcast => "ncclBroadcast",
            Kind::Reduce => "ncclReduce",
            Kind::AllGather => "ncclAllGather",
            Kind::ReduceScatter => "ncclReduceScatter",
        }
    }
}

/// What every rank of a clique must agree on, for one collective.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Shape {
    pub(crate) kind: Kind,
    /// NCCL's count: elements per rank (all-gather: sent; reduce-scatter: received).
    pub(crate) count: usize,
    pub(crate) dtype: &'static str,
    pub(crate) op: Option<ReduceOp>,
    pub(crate) root: Option<usize>,
}

impl fmt::Display for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self.kind {
            Kind::AllReduce => "all-reduce",
            Kind::Broadcast => "broadcast",
            Kind::Reduce => "reduce",
            Kind::AllGather => "all-gather",
            Kind::ReduceScatter => "reduce-scatter",
        };
        write!(f, "{name}")?;
        if let Some(op) = self.op {
            write!(f, " ({op:?})")?;
        }
        write!(f, " of {} {}", self.count, self.dtype)?;
        if matches!(self.kind, Kind::AllGather | Kind::ReduceScatter) {
            write!(f, " per rank")?;
        }
        if let Some(root) = self.root {
            let to = if self.kind == Kind::Broadcast { "from" } else { "to" };
            write!(f, " {to} root {root}")?;
        }
        Ok(())
    }
}

/// A list of shapes, for errors: `[broadcast of 4 f32 from root 0, …]`.
pub(crate) fn list(shapes: &[Shape]) -> String {
    let items: Vec<String> = shapes.iter().map(Shape::to_string).collect();
    format!("[{}]", items.join(", "))
}

/// One rank's collectives in one group, in the order the group holds them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RankRun {
    pub(crate) rank: usize,
    pub(crate) shapes: Vec<Shape>,
}

/// One rank's collectives of a group as recorded: the number of the first, how many, and
/// how many of them the group has been told are agreed.
#[derive(Debug)]
struct Presented {
    rank: usize,
    first: u64,
    count: usize,
    released: usize,
}

/// What [`CliqueLog::present`] recorded for one group, and the timeout in force then.
pub(crate) struct Ticket<'l> {
    log: &'l CliqueLog,
    runs: Vec<Presented>,
    timeout: Duration,
}

/// What [`Waves::next`] found: how many collectives of each rank of the group (by clique id
/// and rank, counted from the group's first) every rank has agreed on so far; whether every
/// collective of the group is settled (agreed, or refused); why some are refused.
#[derive(Debug)]
pub(crate) struct Wave {
    pub(crate) agreed: HashMap<(u64, usize), usize>,
    pub(crate) last: bool,
    pub(crate) refusal: Option<String>,
}

/// A group's collectives presented to the logs of their cliques, handed to NCCL in waves as
/// the other ranks agree: all at once when every rank is in the group or has presented
/// already, else each collective as soon as every rank has presented it (a rank that queues
/// its first collective alone may need this rank inside NCCL too before it can present its
/// second).
pub(crate) struct Waves<'l> {
    tickets: Vec<Ticket<'l>>,
    started: Instant,
}

/// Wakes waiting groups: every change of a log that could let a wait end is followed by a
/// notification under this lock, and a waiter checks the logs while holding it, so none is
/// missed. One for the process, so that a group waits on the logs of several cliques at
/// once. Taken before a log's lock, never after.
static WAKE: Mutex<()> = Mutex::new(());
static CHANGED: Condvar = Condvar::new();

fn wake_all() {
    let _wake = WAKE.lock().unwrap_or_else(PoisonError::into_inner);
    CHANGED.notify_all();
}

impl<'l> Waves<'l> {
    /// No collectives yet; the timeouts count from now.
    pub(crate) fn new() -> Waves<'l> {
        Waves { tickets: Vec::new(), started: Instant::now() }
    }

    pub(crate) fn push(&mut self, ticket: Ticket<'l>) {
        self.tickets.push(ticket);
    }

    /// Waits until more of the group's collectives are agreed than the last wave said, or all
    /// are settled: agreed, or refused because a clique is poisoned, or because a ticket's
    /// timeout passed since [`new`](Self::new) (which poisons the clique, naming the ranks that
    /// did not present and how long this waited). Never waits when every collective is agreed
    /// already, as a group holding every rank finds them.
    pub(crate) fn next(&mut self) -> Wave {
        let mut wake = WAKE.lock().unwrap_or_else(PoisonError::into_inner);
        loop {
            let now = Instant::now();
            let mut wave = Wave { agreed: HashMap::new(), last: true, refusal: None };
            let mut progressed = false;
            let mut deadline: Option<Instant> = None;
            for ticket in &mut self.tickets {
                let mut state = ticket.log.lock();
                let settled = |state: &State| {
                    state.poisoned.is_some()
                        || ticket.runs.iter().all(|run| run.first + run.count as u64 <= state.agreed)
                };
                let ends = self.started.checked_add(ticket.timeout);
                if !settled(&state) && ends.is_some_and(|ends| now >= ends) {
                    state.poisoned = Some(timed_out(&state, ticket, now - self.started));
                    CHANGED.notify_all();
                }
                if !settled(&state) {
                    wave.last = false;
                    deadline = match (deadline, ends) {
                        (Some(a), Some(b)) => Some(a.min(b)),
                        (a, b) => a.or(b),
                    };
                }
                for run in &ticket.runs {
                    let agreed = (state.agreed.saturating_sub(run.first) as usize).min(run.count);
                    progressed |= agreed > run.released;
                    wave.agreed.insert((ticket.log.id, run.rank), agreed);
                    if agreed < run.count && wave.refusal.is_none() {
                        wave.refusal = state.poisoned.as_ref().map(|why| format!("{why}; {OUT_OF_STEP}"));
                    }
                }
            }
            if progressed || wave.last {
                for ticket in &mut self.tickets {
                    for run in &mut ticket.runs {
                        run.released = wave.agreed[&(ticket.log.id, run.rank)];
                    }
                }
                return wave;
            }
            wake = match deadline {
                Some(deadline) => {
                    CHANGED.wait_timeout(wake, deadline - now).unwrap_or_else(PoisonError::into_inner).0
                }
                None => CHANGED.wait(wake).unwrap_or_else(PoisonError::into_inner),
            };
        }
    }
}

/// The log every communicator of one clique shares.
pub(crate) struct CliqueLog {
    id: u64,
    ranks: usize,
    state: Mutex<State>,
}

struct State {
    timeout: Duration,
    /// How many collectives each rank has presented: its next one's number.
    presented: Vec<u64>,
    /// Collectives `0..agreed` were presented by every rank with one shape: NCCL may have
    /// them. Once poisoned, `agreed` never moves again.
    agreed: u64,
    /// Collectives `agreed..`: what each rank presented for each (`None`: not yet).
    pending: VecDeque<Vec<Option<Shape>>>,
    /// Why the clique refuses every later collective (its ranks are out of step).
    poisoned: Option<String>,
}

/// What every refusal that poisons adds.
const OUT_OF_STEP: &str =
    "the clique refuses every later collective, since its ranks are out of step (make new \
                           communicators)";

impl CliqueLog {
    /// The log of a new clique of `ranks` ranks (`id` names it: it tells cliques apart in a
    /// group).
    pub(crate) fn new(id: u64, ranks: usize, timeout: Duration) -> CliqueLog {
        CliqueLog {
            id,
            ranks,
            state: Mutex::new(State {
                timeout,
                presented: vec![0; ranks],
                agreed: 0,
                pending: VecDeque::new(),
                poisoned: None,
            }),
        }
    }

    pub(crate) fn id(&self) -> u64 {
        self.id
    }

    pub(crate) fn ranks(&self) -> usize {
        self.ranks
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // Nothing panics while the lock is held with the state half changed.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn timeout(&self) -> Duration {
        self.lock().timeout
    }

    /// Sets the timeout of launches that present collectives from now on.
    pub(crate) fn set_timeout(&self, timeout: Duration) {
        self.lock().timeout = timeout;
    }

    /// Refuses, recording nothing, a group whose ranks of this clique (`runs`, distinct
    /// ranks) issue different collectives among themselves (no other group could make up for
    /// that: the group's ranks present nothing more while it waits), or a clique already
    /// poisoned.
    pub(crate) fn check_together(&self, runs: &[RankRun]) -> Result<(), String> {
        if let Some(why) = &self.lock().poisoned {
            return Err(poisoned(why));
        }
        let mut sorted: Vec<&RankRun> = runs.iter().collect();
        sorted.sort_by_key(|run| run.rank);
        let Some((first, rest)) = sorted.split_first() else { return Ok(()) };
        for run in rest {
            if run.shapes != first.shapes {
                return Err(format!(
                    "ranks {} and {} of one clique issue different collectives: {} vs {} (every rank must issue \
                     the same ones, in the same order)",
                    first.rank,
                    run.rank,
                    list(&first.shapes),
                    list(&run.shapes)
                ));
            }
        }
        Ok(())
    }

    /// Records each rank's collectives of one group (`runs`, distinct ranks) as its next ones,
    /// and compares them with what the other ranks presented for the same numbers. A mismatch
    /// poisons the clique (the ticket's [`Waves`] then say so); a clique already
    /// poisoned records nothing and is `Err`.
    pub(crate) fn present(&self, runs: &[RankRun]) -> Result<Ticket<'_>, String> {
        let mut state = self.lock();
        if let Some(why) = &state.poisoned {
            return Err(poisoned(why));
        }
        let mut ticket = Ticket { log: self, runs: Vec::with_capacity(runs.len()), timeout: state.timeout };
        for run in runs {
            let first = state.presented[run.rank];
            for (i, shape) in run.shapes.iter().enumerate() {
                // Every rank has presented at least `agreed` collectives: the index is not
                // negative, and at most the group's length past the furthest rank.
                let index = (first - state.agreed) as usize + i;
                while state.pending.len() <= index {
                    state.pending.push_back(vec![None; self.ranks]);
                }
                state.pending[index][run.rank] = Some(*shape);
            }
            state.presented[run.rank] += run.shapes.len() as u64;
            ticket.runs.push(Presented { rank: run.rank, first, count: run.shapes.len(), released: 0 });
        }
        // Collectives every rank presented alike are agreed (and forgotten); the first one
        // presented differently, if any, poisons.
        while state
            .pending
            .front()
            .is_some_and(|ranks| ranks.iter().all(Option::is_some) && conflict(ranks).is_none())
        {
            state.pending.pop_front();
            state.agreed += 1;
        }
        let agreed = state.agreed;
        let found = state
            .pending
            .iter()
            .enumerate()
            .find_map(|(i, ranks)| conflict(ranks).map(|found| (agreed + i as u64, found)));
        if let Some((number, ((a, shape_a), (b, shape_b)))) = found {
            state.poisoned = Some(format!(
                "ranks {a} and {b} of one clique issue different collectives from separate groups: their \
                 collective #{number} is {shape_a} on rank {a} and {shape_b} on rank {b} (every rank must issue \
                 the same ones, in the same order)"
            ));
        }
        drop(state);
        wake_all();
        Ok(ticket)
    }

    /// Poisons the clique after collectives every rank agreed on could not all be queued
    /// (`what` says which and why): other ranks' groups may have queued theirs.
    pub(crate) fn out_of_step(&self, what: String) {
        let mut state = self.lock();
        if state.poisoned.is_none() {
            state.poisoned = Some(what);
        }
        drop(state);
        wake_all();
    }
}

/// Two ranks that presented different shapes for one collective: the lowest rank and the
/// first rank differing from it.
#[allow(clippy::type_complexity)]
fn conflict(ranks: &[Option<Shape>]) -> Option<((usize, Shape), (usize, Shape))> {
    let mut presented = ranks.iter().enumerate().filter_map(|(rank, shape)| shape.map(|shape| (rank, shape)));
    let first = presented.next()?;
    presented.find(|&(_, shape)| shape != first.1).map(|other| (first, other))
}

/// The refusal of a launch on a clique already poisoned.
fn poisoned(why: &str) -> String {
    format!("the clique refuses every later collective since its ranks went out of step: {why} (make new communicators)")
}

/// Why a wait gave up: the first collective not agreed, who presented it (and as what), who
/// did not.
fn timed_out(state: &State, ticket: &Ticket<'_>, waited: Duration) -> String {
    let number = state.agreed;
    let slot = state.pending.front().map(Vec::as_slice).unwrap_or_default();
    let missing: Vec<String> = (0..state.presented.len())
        .filter(|&rank| !matches!(slot.get(rank), Some(Some(_))))
        .map(|r| r.to_string())
        .collect();
    let issued: Vec<String> = slot
        .iter()
        .enumerate()
        .filter_map(|(rank, shape)| shape.map(|shape| format!("rank {rank} issued {shape}")))
        .collect();
    let waiting: Vec<String> = ticket.runs.iter().map(|run| run.rank.to_string()).collect();
    format!(
        "rank{} {} of the clique did not issue collective #{number} within the agreement timeout of {:?} ({}; the \
         launch holding rank{} {} waited {:.1} s)",
        if missing.len() == 1 { "" } else { "s" },
        missing.join(", "),
        ticket.timeout,
        if issued.is_empty() { "no rank issued it yet".to_owned() } else { issued.join(", ") },
        if waiting.len() == 1 { "" } else { "s" },
        waiting.join(", "),
        waited.as_secs_f64()
    )
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::thread;

    use super::*;

    fn broadcast(count: usize) -> Shape {
        Shape { kind: Kind::Broadcast, count, dtype: "f32", op: None, root: Some(0) }
    }

    fn all_reduce(count: usize) -> Shape {
        Shape { kind: Kind::AllReduce, count, dtype: "f64", op: Some(ReduceOp::Sum), root: None }
    }

    fn run(rank: usize, shapes: &[Shape]) -> Vec<RankRun> {
        vec![RankRun { rank, shapes: shapes.to_vec() }]
    }

    const LONG: Duration = Duration::from_secs(3600);

    /// What a group launch would hand NCCL in the end, and in how many waves.
    #[derive(Debug)]
    struct Verdict {
        allowed: Vec<(usize, usize)>,
        refusal: Option<String>,
        waves: usize,
    }

    /// Waits wave after wave until every collective of `ticket` is settled.
    fn settle(ticket: Ticket<'_>) -> Verdict {
        let id = ticket.log.id();
        let ranks: Vec<usize> = ticket.runs.iter().map(|run| run.rank).collect();
        let mut waves = Waves::new();
        waves.push(ticket);
        for count in 1.. {
            let wave = waves.next();
            if wave.last {
                let allowed = ranks.iter().map(|&rank| (rank, wave.agreed[&(id, rank)])).collect();
                return Verdict { allowed, refusal: wave.refusal, waves: count };
            }
        }
        unreachable!()
    }

    /// Checks, presents and settles, as a group launch does.
    fn launch(log: &CliqueLog, runs: &[RankRun]) -> Result<Verdict, String> {
        log.check_together(runs)?;
        Ok(settle(log.present(runs)?))
    }

    #[test]
    fn shapes_read_as_the_collectives_they_are() {
        assert_eq!(broadcast(1024).to_string(), "broadcast of 1024 f32 from root 0");
        assert_eq!(all_reduce(16).to_string(), "all-reduce (Sum) of 16 f64");
        let gather = Shape { kind: Kind::AllGather, count: 4, dtype: "i32", op: None, root: None };
        let reduce =
            Shape { kind: Kind::Reduce, count: 2, dtype: "u8", op: Some(ReduceOp::Max), root: Some(1) };
        assert_eq!(list(&[gather, reduce]), "[all-gather of 4 i32 per rank, reduce (Max) of 2 u8 to root 1]");
    }

    #[test]
    fn a_group_holding_every_rank_never_waits() {
        let log = CliqueLog::new(1, 3, LONG);
        let started = Instant::now();
        for _ in 0..5 {
            let runs: Vec<RankRun> =
                (0..3).map(|rank| RankRun { rank, shapes: vec![broadcast(8), all_reduce(4)] }).collect();
            let verdict = launch(&log, &runs).unwrap();
            assert!(verdict.refusal.is_none());
            assert_eq!(verdict.allowed, vec![(0, 2), (1, 2), (2, 2)]);
            assert_eq!(verdict.waves, 1, "all in one wave: the group stays one NCCL group");
        }
        assert!(started.elapsed() < Duration::from_secs(5), "waited {:?}", started.elapsed());
        let state = log.lock();
        assert_eq!((state.agreed, state.pending.len()), (10, 0), "agreed collectives are forgotten");
    }

    #[test]
    fn ranks_of_one_group_that_disagree_are_refused_without_a_trace() {
        let log = CliqueLog::new(1, 2, LONG);
        let runs = vec![
            RankRun { rank: 0, shapes: vec![broadcast(8)] },
            RankRun { rank: 1, shapes: vec![broadcast(16)] },
        ];
        let why = launch(&log, &runs).unwrap_err();
        assert!(why.contains("ranks 0 and 1 of one clique issue different collectives"), "{why}");
        assert!(
            why.contains("[broadcast of 8 f32 from root 0] vs [broadcast of 16 f32 from root 0]"),
            "{why}"
        );
        // A count that differs within the group is refused alike (it could never be made up).
        let runs = vec![
            RankRun { rank: 0, shapes: vec![broadcast(8), broadcast(8)] },
            RankRun { rank: 1, shapes: vec![broadcast(8)] },
        ];
        assert!(launch(&log, &runs).is_err());
        // Nothing was recorded: the clique works on.
        let runs = vec![
            RankRun { rank: 0, shapes: vec![broadcast(8)] },
            RankRun { rank: 1, shapes: vec![broadcast(8)] },
        ];
        let verdict = launch(&log, &runs).unwrap();
        assert!(verdict.refusal.is_none());
        assert_eq!(log.lock().agreed, 1);
    }

    #[test]
    fn ranks_in_separate_threads_agree() {
        let log = Arc::new(CliqueLog::new(1, 2, LONG));
        let threads: Vec<_> = (0..2)
            .map(|rank| {
                let log = log.clone();
                thread::spawn(move || {
                    (0..50)
                        .map(|round| {
                            if rank == 1 && round % 7 == 0 {
                                thread::sleep(Duration::from_millis(2));
                            }
                            let shapes = [broadcast(round), all_reduce(round + 1)];
                            launch(&log, &run(rank, &shapes)).unwrap()
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        for (rank, thread) in threads.into_iter().enumerate() {
            for verdict in thread.join().unwrap() {
                assert!(verdict.refusal.is_none(), "{:?}", verdict.refusal);
                assert_eq!(verdict.allowed, vec![(rank, 2)]);
            }
        }
        assert_eq!(log.lock().agreed, 100);
    }

    #[test]
    fn a_rank_waits_for_the_others_to_present() {
        let log = Arc::new(CliqueLog::new(1, 2, LONG));
        let ticket = log.present(&run(0, &[broadcast(4)])).unwrap();
        let late = {
            let log = log.clone();
            thread::spawn(move || {
                thread::sleep(Duration::from_millis(100));
                launch(&log, &run(1, &[broadcast(4)])).unwrap()
            })
        };
        let started = Instant::now();
        let verdict = settle(ticket);
        assert!(started.elapsed() >= Duration::from_millis(50), "returned before rank 1 presented");
        assert!(verdict.refusal.is_none());
        assert_eq!(verdict.allowed, vec![(0, 1)]);
        assert!(late.join().unwrap().refusal.is_none());
    }

    #[test]
    fn ranks_in_separate_groups_that_disagree_are_both_refused_at_once() {
        let log = Arc::new(CliqueLog::new(1, 2, LONG));
        let first = {
            let log = log.clone();
            thread::spawn(move || launch(&log, &run(0, &[broadcast(1024)])).unwrap())
        };
        thread::sleep(Duration::from_millis(50));
        let started = Instant::now();
        let second = launch(&log, &run(1, &[broadcast(2048)])).unwrap();
        let first = first.join().unwrap();
        assert!(started.elapsed() < Duration::from_secs(10), "a mismatch must not wait for the timeout");
        for verdict in [&first, &second] {
            let why = verdict.refusal.as_deref().expect("refused");
            assert!(why.contains("ranks 0 and 1 of one clique issue different collectives"), "{why}");
            assert!(why.contains("broadcast of 1024 f32 from root 0 on rank 0"), "{why}");
            assert!(why.contains("broadcast of 2048 f32 from root 0 on rank 1"), "{why}");
            assert!(why.contains("out of step"), "{why}");
            assert_eq!(verdict.allowed[0].1, 0, "nothing mismatched reaches NCCL");
        }
        // Poisoned: every later collective is refused at once, saying why.
        for rank in 0..2 {
            let why = launch(&log, &run(rank, &[broadcast(1024)])).unwrap_err();
            assert!(why.contains("refuses every later collective") && why.contains("2048"), "{why}");
        }
    }

    #[test]
    fn a_rank_that_never_presents_times_the_others_out() {
        let log = CliqueLog::new(1, 3, Duration::from_millis(100));
        let started = Instant::now();
        let verdict = launch(&log, &run(2, &[all_reduce(64)])).unwrap();
        let waited = started.elapsed();
        assert!(waited >= Duration::from_millis(100) && waited < Duration::from_secs(10), "{waited:?}");
        let why = verdict.refusal.expect("timed out");
        assert!(why.contains("ranks 0, 1 of the clique did not issue collective #0"), "{why}");
        assert!(why.contains("within the agreement timeout of 100ms"), "{why}");
        assert!(why.contains("rank 2 issued all-reduce (Sum) of 64 f64"), "{why}");
        assert!(why.contains("waited 0."), "{why}");
        assert_eq!(verdict.allowed, vec![(2, 0)]);
        // The late rank is refused at once.
        let started = Instant::now();
        let why = launch(&log, &run(0, &[all_reduce(64)])).unwrap_err();
        assert!(started.elapsed() < Duration::from_millis(100));
        assert!(why.contains("did not issue collective #0"), "{why}");
    }

    #[test]
    fn the_timeout_is_set_per_clique() {
        let log = CliqueLog::new(1, 2, DEFAULT_AGREEMENT_TIMEOUT);
        assert_eq!(log.timeout(), Duration::from_secs(60));
        log.set_timeout(Duration::from_millis(20));
        let verdict = launch(&log, &run(0, &[broadcast(1)])).unwrap();
        assert!(verdict.refusal.unwrap().contains("rank 1 of the clique did not issue"));
    }

    #[test]
    fn what_every_rank_agreed_on_before_a_refusal_still_reaches_nccl() {
        // Rank 0 launches two collectives in one group; rank 1 launches them one per group,
        // and its second disagrees: both ranks queue the first, neither the second.
        let log = Arc::new(CliqueLog::new(1, 2, LONG));
        let rank0 = {
            let log = log.clone();
            thread::spawn(move || launch(&log, &run(0, &[broadcast(4), broadcast(8)])).unwrap())
        };
        thread::sleep(Duration::from_millis(50));
        let one = launch(&log, &run(1, &[broadcast(4)])).unwrap();
        assert!(one.refusal.is_none());
        assert_eq!(one.allowed, vec![(1, 1)]);
        let two = launch(&log, &run(1, &[broadcast(9)])).unwrap();
        let rank0 = rank0.join().unwrap();
        assert_eq!(rank0.allowed, vec![(0, 1)], "rank 0 queues the agreed first one");
        assert_eq!(two.allowed, vec![(1, 0)]);
        for why in [rank0.refusal.unwrap(), two.refusal.unwrap()] {
            assert!(why.contains("collective #1 is broadcast of 8 f32"), "{why}");
        }
    }

    #[test]
    fn a_timeout_freezes_the_clique_at_its_first_collective_not_agreed() {
        // Rank 2 presents #0 and #1 and waits; rank 0 presents #0 only; rank 1 never comes.
        let log = Arc::new(CliqueLog::new(1, 3, Duration::from_millis(100)));
        let ticket = log.present(&run(2, &[broadcast(1), broadcast(2)])).unwrap();
        let verdict = launch(&log, &run(0, &[broadcast(1)])).unwrap();
        assert_eq!(verdict.allowed, vec![(0, 0)]);
        assert!(verdict.refusal.unwrap().contains("rank 1 of the clique did not issue collective #0"));
        let verdict = settle(ticket);
        assert_eq!(verdict.allowed, vec![(2, 0)]);
        assert!(verdict.refusal.is_some());
    }

    #[test]
    fn what_is_agreed_is_handed_on_while_the_rest_waits() {
        // Rank 0 launches two collectives in one group; rank 1 launches them one per group and
        // presents its second only once its first launch returned (which in NCCL may need
        // rank 0 inside NCCL too): rank 0 gets the first in a wave of its own.
        let log = CliqueLog::new(1, 2, LONG);
        let mut waves = Waves::new();
        waves.push(log.present(&run(0, &[broadcast(4), all_reduce(8)])).unwrap());
        assert!(launch(&log, &run(1, &[broadcast(4)])).unwrap().refusal.is_none());
        let first = waves.next();
        assert_eq!((first.agreed[&(1, 0)], first.last), (1, false));
        assert!(launch(&log, &run(1, &[all_reduce(8)])).unwrap().refusal.is_none());
        let second = waves.next();
        assert_eq!((second.agreed[&(1, 0)], second.last), (2, true));
        assert!(second.refusal.is_none());
    }

    #[test]
    fn a_group_waits_on_several_cliques_at_once() {
        let (a, b) = (Arc::new(CliqueLog::new(7, 2, LONG)), Arc::new(CliqueLog::new(8, 2, LONG)));
        let mut waves = Waves::new();
        waves.push(a.present(&run(0, &[broadcast(1)])).unwrap());
        waves.push(b.present(&run(0, &[broadcast(2)])).unwrap());
        let other = {
            let (a, b) = (a.clone(), b.clone());
            thread::spawn(move || {
                thread::sleep(Duration::from_millis(50));
                // Clique b first: the group must see it while clique a still waits.
                let on_b = b.present(&run(1, &[broadcast(2)])).unwrap();
                thread::sleep(Duration::from_millis(50));
                let on_a = a.present(&run(1, &[broadcast(1)])).unwrap();
                (settle(on_b).refusal, settle(on_a).refusal)
            })
        };
        let first = waves.next();
        assert_eq!((first.agreed[&(7, 0)], first.agreed[&(8, 0)], first.last), (0, 1, false));
        let second = waves.next();
        assert_eq!((second.agreed[&(7, 0)], second.agreed[&(8, 0)], second.last), (1, 1, true));
        assert_eq!(other.join().unwrap(), (None, None));
    }

    #[test]
    fn timeouts_parse_from_seconds() {
        assert_eq!(parse_timeout("2"), Some(Duration::from_secs(2)));
        assert_eq!(parse_timeout(" 0.25 "), Some(Duration::from_millis(250)));
        assert_eq!(parse_timeout("inf"), Some(Duration::MAX));
        assert_eq!(parse_timeout("1e300"), Some(Duration::MAX));
        assert_eq!(parse_timeout("-1"), None);
        assert_eq!(parse_timeout("NaN"), None);
        assert_eq!(parse_timeout("soon"), None);
    }

    #[test]
    fn no_limit_waits_until_the_others_come() {
        let log = Arc::new(CliqueLog::new(1, 2, Duration::MAX));
        let late = {
            let log = log.clone();
            thread::spawn(move || {
                thread::sleep(Duration::from_millis(50));
                launch(&log, &run(1, &[broadcast(3)])).unwrap()
            })
        };
        assert!(launch(&log, &run(0, &[broadcast(3)])).unwrap().refusal.is_none());
        assert!(late.join().unwrap().refusal.is_none());
    }
}
