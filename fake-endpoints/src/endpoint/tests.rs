//! The endpoint's own tests: the connect schedule consumed and recorded, a step counted done
//! however its task ends, and admission around a crash.

use std::time::Duration;

use bytes::Bytes;
use http::StatusCode;

use super::Endpoint;
use super::admission::{Admission, Arrival};
use super::task::Answer;
use crate::{
    ConnectAction, ConnectRecord, ConnectStep, EndpointConfig, Ledger, ScriptState, Step,
    VirtualClock,
};

#[tokio::test(start_paused = true)]
async fn connect_schedule_is_consumed_and_recorded() {
    let endpoint = Endpoint::new(
        EndpointConfig::http("api").connect([
            ConnectStep::refuse().times(2),
            ConnectStep::blackhole(),
            ConnectStep::accept(),
        ]),
        VirtualClock::new(),
    );
    let actions: Vec<_> = (1..=5).map(|id| endpoint.on_connect(id)).collect();
    use ConnectAction::*;
    assert_eq!(actions, [Refuse, Refuse, Blackhole, Accept, Accept]);
    let connects = endpoint.ledger().snapshot().connects;
    assert_eq!(connects.len(), 5);
    assert_eq!(
        connects[2],
        ConnectRecord {
            conn_id: 3,
            at_ms: 0,
            action: Blackhole
        }
    );
}

/// A GET of `/` on connection `conn_id`, as a connection hands it over.
fn arrival(conn_id: u64) -> Arrival {
    let (parts, ()) = http::Request::get("/").body(()).unwrap().into_parts();
    Arrival {
        conn_id,
        seq: 0,
        stream_id: None,
        inbound: 0..0,
        head: crate::http::detach::Recent::default().head(parts),
        body: Bytes::new(),
    }
}

#[test]
fn a_step_whose_task_never_ran_is_counted_done_when_its_runtime_goes() {
    // A crashed turmoil host's runtime is dropped with the tasks spawned on it, some
    // perhaps never polled: their steps must not stay in progress.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap();
    let endpoint = {
        let _in = runtime.enter();
        let endpoint = Endpoint::new(
            EndpointConfig::http("api").script([Step::status(200).latency(Duration::from_secs(1))]),
            VirtualClock::new(),
        );
        assert!(endpoint.admit(arrival(1)).is_some());
        endpoint
    };
    assert_eq!(endpoint.steps_in_progress(), 1);
    drop(runtime);
    assert_eq!(endpoint.steps_in_progress(), 0);
}

#[tokio::test(start_paused = true)]
async fn a_crashed_endpoint_admits_nothing_until_it_restarts() {
    let endpoint = Endpoint::new(
        EndpointConfig::http("api").script([Step::status(503), Step::status(200)]),
        VirtualClock::new(),
    );
    endpoint.crash();
    assert!(endpoint.admit(arrival(1)).is_none());
    endpoint.restart(ScriptState::Keep);
    // The script's first step is still there for the first request admitted.
    let Some((_, Admission::Done(Answer::Respond(response, _)))) = endpoint.admit(arrival(2))
    else {
        panic!("not answered at once with a response");
    };
    assert_eq!(response.status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(endpoint.ledger().snapshot().requests.len(), 1);
}

#[test]
fn endpoint_is_send_sync_clone() {
    fn check<T: Send + Sync + Clone + 'static>() {}
    check::<Endpoint>();
    check::<Ledger>();
}
