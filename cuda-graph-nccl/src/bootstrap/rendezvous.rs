//! The TCP rendezvous: rank 0 hands every other rank a few bytes (NCCL's unique id).
//!
//! Protocol (every integer little-endian): each rank `r > 0` connects to rank 0 and sends a
//! hello of 28 bytes, [`MAGIC`] (8), [`PROTOCOL_VERSION`] (`u32`), its rank (`u64`) and the
//! world size it was told (`u64`). Once every rank has said hello, rank 0 answers each with
//! [`MAGIC`], a status byte (0: the payload follows; 1: refused, a UTF-8 reason follows), a
//! length (`u32`) and that many bytes. Every socket operation has a timeout.

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

use super::BootstrapError;

/// The first bytes of every message of the rendezvous.
pub const MAGIC: [u8; 8] = *b"cgnccl-r";
/// The version of the rendezvous protocol; ranks of other versions are refused.
pub const PROTOCOL_VERSION: u32 = 1;
/// The largest payload the rendezvous carries (NCCL's unique id is 128 bytes).
pub const MAX_PAYLOAD: usize = 64 * 1024;
/// How long rank 0 waits for a hello on a connection it accepted before dropping it as not
/// a rank's (it is sent at once after connecting).
const HELLO_WAIT: Duration = Duration::from_secs(10);
/// The longest single connection attempt of a joining rank.
const CONNECT_WAIT: Duration = Duration::from_secs(2);
/// How much longer than its own timeout a joined rank listens for rank 0's answer: rank 0,
/// started later, may still be waiting for a missing rank, and its answer names it.
const ANSWER_GRACE: Duration = Duration::from_secs(5);
/// The pause between a joining rank's attempts, and between rank 0's polls for connections.
const RETRY_PAUSE: Duration = Duration::from_millis(50);

/// One rank's side of the rendezvous of a world (see [`Launch::rendezvous`](super::Launch::rendezvous)).
///
/// Rank 0 listens on `address` ([`serve`](Self::serve)); every other rank connects to it,
/// retrying until `timeout` passes ([`join`](Self::join)). Rank 0 returns `Err` naming the
/// ranks that did not come and the time waited; another rank returns `Err` naming the
/// address it could not reach, or the silence it met there.
///
/// ```no_run
/// use std::time::Duration;
/// use cuda_graph_nccl::bootstrap::Rendezvous;
/// let rank = std::env::args().nth(1).unwrap().parse()?;
/// let meeting = Rendezvous { address: "127.0.0.1:29500".into(), rank, world_size: 2, timeout: Duration::from_secs(30) };
/// let bytes = meeting.share(|| b"hello".to_vec())?;
/// assert_eq!(bytes, b"hello");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rendezvous {
    /// Rank 0's `host:port`.
    pub address: String,
    /// This rank.
    pub rank: usize,
    /// How many ranks meet.
    pub world_size: usize,
    /// How long to wait for the others (`Duration::MAX`: no limit).
    pub timeout: Duration,
}

impl Rendezvous {
    /// Rank 0 serves `make()`'s bytes (made only on rank 0); every other rank joins and
    /// returns what rank 0 served. A world of one rank returns `make()` at once.
    pub fn share(&self, make: impl FnOnce() -> Vec<u8>) -> Result<Vec<u8>, BootstrapError> {
        if self.rank == 0 {
            let payload = make();
            self.serve(&payload)?;
            Ok(payload)
        } else {
            self.join()
        }
    }

    /// Rank 0: listens on the address, waits until every other rank has said hello, then
    /// sends each `payload`. A hello of a duplicate rank, of a rank beyond the world, of
    /// another world size, magic or protocol version is `Err` naming it (and the ranks
    /// already there are told why); so is the timeout, naming the ranks missing.
    pub fn serve(&self, payload: &[u8]) -> Result<(), BootstrapError> {
        self.check_self(0)?;
        if payload.len() > MAX_PAYLOAD {
            return Err(BootstrapError::PayloadTooLarge { len: payload.len() });
        }
        if self.world_size == 1 {
            return Ok(());
        }
        let start = Instant::now();
        let deadline = start.checked_add(self.timeout);
        let bind_error = |error: std::io::Error| BootstrapError::Bind {
            address: self.address.clone(),
            error: error.to_string(),
        };
        let listener = TcpListener::bind(self.address.as_str()).map_err(bind_error)?;
        listener.set_nonblocking(true).map_err(bind_error)?;
        let mut peers: Vec<Option<TcpStream>> = (0..self.world_size).map(|_| None).collect();
        let mut arrived = 1;
        while arrived < self.world_size {
            match listener.accept() {
                Ok((stream, from)) => match self.hello_of(stream, from, deadline) {
                    Ok(None) => {} // not a rank's connection: dropped
                    Ok(Some((rank, stream))) => {
                        if peers[rank].is_some() {
                            let err = BootstrapError::DuplicateRank { rank, from: from.to_string() };
                            refuse_all(&peers, Some(stream), &err);
                            return Err(err);
                        }
                        peers[rank] = Some(stream);
                        arrived += 1;
                    }
                    Err((err, stream)) => {
                        refuse_all(&peers, stream, &err);
                        return Err(err);
                    }
                },
                Err(error)
                    if error.kind() == ErrorKind::WouldBlock || error.kind() == ErrorKind::Interrupted =>
                {
                    if deadline.is_some_and(|deadline| Instant::now() >= deadline) {
                        let missing: Vec<usize> =
                            (1..self.world_size).filter(|&r| peers[r].is_none()).collect();
                        let err = BootstrapError::MissingRanks {
                            address: self.address.clone(),
                            missing,
                            world_size: self.world_size,
                            waited: start.elapsed(),
                        };
                        refuse_all(&peers, None, &err);
                        return Err(err);
                    }
                    std::thread::sleep(RETRY_PAUSE);
                }
                Err(error) => {
                    let err = BootstrapError::Io {
                        address: self.address.clone(),
                        what: "accepting a rank's connection",
                        error: error.to_string(),
                    };
                    refuse_all(&peers, None, &err);
                    return Err(err);
                }
            }
        }
        for (rank, stream) in peers.iter().enumerate() {
            if let Some(stream) = stream {
                send_reply(stream, 0, payload, remaining(deadline)).map_err(|error| BootstrapError::Io {
                    address: self.address.clone(),
                    what: "sending the payload to a rank",
                    error: format!("rank {rank}: {error}"),
                })?;
            }
        }
        Ok(())
    }

    /// Every rank but 0: connects to rank 0 (retrying until the timeout), says hello, and
    /// returns the payload rank 0 sends once every rank is there.
    pub fn join(&self) -> Result<Vec<u8>, BootstrapError> {
        if self.rank == 0 {
            return Err(BootstrapError::RankOutOfRange {
                name: "rank",
                value: 0,
                world_size: self.world_size,
            });
        }
        self.check_self(self.rank)?;
        let start = Instant::now();
        let deadline = start.checked_add(self.timeout);
        let mut stream = self.connect(start, deadline)?;
        let io = |what: &'static str, error: std::io::Error| BootstrapError::Io {
            address: self.address.clone(),
            what,
            error: error.to_string(),
        };
        let mut hello = Vec::with_capacity(28);
        hello.extend_from_slice(&MAGIC);
        hello.extend_from_slice(&PROTOCOL_VERSION.to_le_bytes());
        hello.extend_from_slice(&(self.rank as u64).to_le_bytes());
        hello.extend_from_slice(&(self.world_size as u64).to_le_bytes());
        stream
            .set_write_timeout(Some(remaining(deadline).unwrap_or(HELLO_WAIT)))
            .map_err(|e| io("configuring", e))?;
        stream.write_all(&hello).map_err(|e| io("sending the hello", e))?;
        let answer_wait = remaining(deadline).map(|left| left.saturating_add(ANSWER_GRACE));
        stream.set_read_timeout(answer_wait).map_err(|e| io("configuring", e))?;
        let mut head = [0u8; 13];
        if let Err(error) = stream.read_exact(&mut head) {
            return Err(match error.kind() {
                ErrorKind::WouldBlock | ErrorKind::TimedOut => {
                    BootstrapError::Silent { address: self.address.clone(), waited: start.elapsed() }
                }
                ErrorKind::UnexpectedEof | ErrorKind::ConnectionReset => {
                    BootstrapError::RankZeroClosed { address: self.address.clone() }
                }
                _ => io("waiting for rank 0's answer", error),
            });
        }
        if head[..8] != MAGIC {
            return Err(BootstrapError::Io {
                address: self.address.clone(),
                what: "reading rank 0's answer",
                error: "the answer does not start with the rendezvous's magic bytes".into(),
            });
        }
        let len = u32::from_le_bytes(head[9..13].try_into().expect("4 bytes")) as usize;
        if len > MAX_PAYLOAD {
            return Err(BootstrapError::PayloadTooLarge { len });
        }
        let mut body = vec![0; len];
        stream.read_exact(&mut body).map_err(|e| io("reading rank 0's answer", e))?;
        match head[8] {
            0 => Ok(body),
            _ => Err(BootstrapError::Refused {
                address: self.address.clone(),
                why: String::from_utf8_lossy(&body).into_owned(),
            }),
        }
    }

    /// `Err` unless this rank lies in the world (and is `expected`, for rank 0).
    fn check_self(&self, expected: usize) -> Result<(), BootstrapError> {
        if self.world_size == 0 || self.rank >= self.world_size || (expected == 0 && self.rank != 0) {
            return Err(BootstrapError::RankOutOfRange {
                name: "rank",
                value: self.rank,
                world_size: self.world_size,
            });
        }
        Ok(())
    }

    /// Connects to rank 0, retrying until the deadline.
    fn connect(&self, start: Instant, deadline: Option<Instant>) -> Result<TcpStream, BootstrapError> {
        let mut last_error = String::from("no attempt finished");
        loop {
            let wait = remaining(deadline).map_or(CONNECT_WAIT, |left| left.min(CONNECT_WAIT));
            match self.address.to_socket_addrs() {
                Ok(addresses) => {
                    for address in addresses {
                        match TcpStream::connect_timeout(&address, wait.max(Duration::from_millis(1))) {
                            Ok(stream) => return Ok(stream),
                            Err(error) => last_error = format!("{address}: {error}"),
                        }
                    }
                }
                Err(error) => last_error = format!("resolving it: {error}"),
            }
            if deadline.is_some_and(|deadline| Instant::now() + RETRY_PAUSE >= deadline) {
                return Err(BootstrapError::Unreachable {
                    address: self.address.clone(),
                    waited: start.elapsed(),
                    error: last_error,
                });
            }
            std::thread::sleep(RETRY_PAUSE);
        }
    }

    /// Reads a connection's hello, waiting up to [`HELLO_WAIT`] but not past the deadline:
    /// `Ok(None)` when it sends none in time (not a rank's), the
    /// rank when the hello is good, `Err` (with the stream, to tell it why) when it is not.
    #[allow(clippy::type_complexity)]
    fn hello_of(
        &self, mut stream: TcpStream, from: SocketAddr, deadline: Option<Instant>,
    ) -> Result<Option<(usize, TcpStream)>, (BootstrapError, Option<TcpStream>)> {
        let from = from.to_string();
        let wait = remaining(deadline).map_or(HELLO_WAIT, |left| left.min(HELLO_WAIT));
        if stream.set_nonblocking(false).and_then(|()| stream.set_read_timeout(Some(wait))).is_err() {
            return Ok(None);
        }
        let mut hello = [0u8; 28];
        if stream.read_exact(&mut hello).is_err() {
            return Ok(None);
        }
        let bad = |why: String, stream: TcpStream| {
            Err((BootstrapError::BadHello { from: from.clone(), why }, Some(stream)))
        };
        if hello[..8] != MAGIC {
            return bad(
                "its first bytes are not the rendezvous's magic (another program on the port?)".into(),
                stream,
            );
        }
        let version = u32::from_le_bytes(hello[8..12].try_into().expect("4 bytes"));
        let rank = u64::from_le_bytes(hello[12..20].try_into().expect("8 bytes"));
        let world = u64::from_le_bytes(hello[20..28].try_into().expect("8 bytes"));
        if version != PROTOCOL_VERSION {
            return bad(
                format!("rank {rank} speaks protocol version {version}, rank 0 speaks {PROTOCOL_VERSION}"),
                stream,
            );
        }
        if world != self.world_size as u64 {
            return Err((
                BootstrapError::WorldSizeMismatch {
                    rank: rank as usize,
                    theirs: world as usize,
                    ours: self.world_size,
                },
                Some(stream),
            ));
        }
        if rank == 0 || rank >= world {
            return bad(format!("it says it is rank {rank} of {world}; rank 0 is this process"), stream);
        }
        Ok(Some((rank as usize, stream)))
    }
}

/// Tells every rank that has said hello (and `extra`) that the rendezvous failed, and why.
fn refuse_all(peers: &[Option<TcpStream>], extra: Option<TcpStream>, err: &BootstrapError) {
    let why = format!("rank 0 failed: {err}");
    for stream in peers.iter().flatten().chain(extra.as_ref()) {
        let _ = send_reply(stream, 1, why.as_bytes(), Some(Duration::from_secs(1)));
    }
}

/// Sends one answer: magic, status, length, bytes.
fn send_reply(
    mut stream: &TcpStream, status: u8, body: &[u8], timeout: Option<Duration>,
) -> std::io::Result<()> {
    stream.set_write_timeout(Some(timeout.unwrap_or(HELLO_WAIT).max(Duration::from_millis(1))))?;
    let mut message = Vec::with_capacity(13 + body.len());
    message.extend_from_slice(&MAGIC);
    message.push(status);
    message.extend_from_slice(&(body.len() as u32).to_le_bytes());
    message.extend_from_slice(body);
    stream.write_all(&message)
}

/// The time left until `deadline` (at least 1 ms: a zero socket timeout is refused); `None`
/// without a deadline.
fn remaining(deadline: Option<Instant>) -> Option<Duration> {
    deadline.map(|deadline| deadline.saturating_duration_since(Instant::now()).max(Duration::from_millis(1)))
}
