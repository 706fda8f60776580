use retrylab_endpoints::{ConnInfo, Endpoint, EndpointConfig, Step, VirtualClock};
#[tokio::test(start_paused = true)]
async fn sizes() {
    let ep = Endpoint::new(
        EndpointConfig::http("api").script([Step::status(503)]),
        VirtualClock::new(),
    );
    let (a, _b) = tokio::io::duplex(1024);
    let f = ep.serve(a, ConnInfo::without_reset(1));
    eprintln!("serve future: {}", std::mem::size_of_val(&f));
}
