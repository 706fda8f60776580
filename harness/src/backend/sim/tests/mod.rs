//! Timing and semantics tests of the simulated network, on a paused current-thread runtime.
//!
//! One file per part of the network: its types, data and FIN, RST, connects, crashes and
//! partitions, HTTP through hyper, the former doc examples, and a run that has ended. This
//! file holds the fixture they share: a network with 250 ms latency and one host, `api`,
//! whose connect decision a test can change and whose accepted streams it receives; a timed
//! read; and the segment events the logs are compared with.

mod connects;
mod crashes_and_partitions;
mod ended_run;
mod examples;
mod hyper_client;
mod resets;
mod streams;
mod type_properties;

use std::io;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::AsyncReadExt;
use tokio::sync::mpsc;
use tokio::time::Instant;

use super::*;

const L: Duration = Duration::from_millis(250);

/// A host whose decision tests can change, handing accepted streams to the test.
struct ChanHost {
    decision: Mutex<ConnectAction>,
    tx: mpsc::UnboundedSender<(u64, SimStream)>,
    start: Instant,
}

impl Host for ChanHost {
    fn on_syn(&self, _conn: ConnId) -> ConnectAction {
        *self.decision.lock().unwrap()
    }
    fn accept(&self, _conn: ConnId, stream: SimStream) {
        let at = Instant::now().duration_since(self.start).as_millis() as u64;
        self.tx.send((at, stream)).unwrap();
    }
}

struct Fixture {
    net: Network,
    host: Arc<ChanHost>,
    accepted: mpsc::UnboundedReceiver<(u64, SimStream)>,
    start: Instant,
}

impl Fixture {
    fn new(decision: ConnectAction) -> Fixture {
        let start = Instant::now();
        let net = Network::new(start, L);
        let (tx, accepted) = mpsc::unbounded_channel();
        let host = Arc::new(ChanHost {
            decision: Mutex::new(decision),
            tx,
            start,
        });
        net.add_host("api", host.clone());
        Fixture {
            net,
            host,
            accepted,
            start,
        }
    }

    fn at(&self, ms: u64) -> Instant {
        self.start + Duration::from_millis(ms)
    }

    /// Connects and returns (client, server), asserting the standard timeline.
    async fn pair(&mut self) -> (SimStream, SimStream) {
        let t0 = self.net.now_ms();
        let client = self.net.connect("api").await.unwrap();
        assert_eq!(self.net.now_ms(), t0 + 500);
        let (at, server) = self.accepted.recv().await.unwrap();
        assert_eq!(at, t0 + 250);
        (client, server)
    }
}

/// Reads once, returning what was read and when.
async fn read_at(
    net: &Network,
    s: &mut SimStream,
    max: usize,
) -> (Result<Vec<u8>, io::ErrorKind>, u64) {
    let mut buf = vec![0u8; max];
    let r = s
        .read(&mut buf)
        .await
        .map(|n| buf[..n].to_vec())
        .map_err(|e| e.kind());
    (r, net.now_ms())
}

fn kind<T: std::fmt::Debug>(r: io::Result<T>) -> io::ErrorKind {
    r.unwrap_err().kind()
}

/// A segment event: `times` is (`sent_at`, `deliver_at`), `bytes` is (offset, len).
fn seg(
    conn: u64,
    dir: Dir,
    seq: u32,
    times: (u64, u64),
    bytes: (u64, u32),
    kind: SegmentKind,
) -> NetEvent {
    NetEvent::Segment(SegmentEvent {
        conn: ConnId(conn),
        dir,
        seq,
        sent_at: times.0,
        deliver_at: times.1,
        offset: bytes.0,
        len: bytes.1,
        kind,
    })
}

use Dir::{ClientToServer as C2S, ServerToClient as S2C};
use SegmentKind::{Data, Fin, Rst};
