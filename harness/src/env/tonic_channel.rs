//! `env.tonic_channel()`: a tonic `Channel` on the run's network (feature `tonic`).
//!
//! tonic dials through [`EnvConnector`], so a gRPC client built on the channel makes its
//! connections, and so its HTTP/2 streams, on the simulated network in virtual time, as
//! any client on `env.connector()` does; its attempts are rebuilt from what the endpoints
//! recorded (the trace shows each one's stream and the gRPC status of its answer).

use tonic::transport::{Channel, Endpoint};

use super::Env;

impl Env {
    /// A tonic [`Channel`] to the operation's endpoint (`http://<name>`), over the run's
    /// network ([`Env::connector`]) and on its clock: tonic's own timers (a request's
    /// `timeout`, the channel's reconnect) are tokio's, which the run drives in virtual
    /// time. The endpoint must speak HTTP/2 (`protocol: http2`).
    ///
    /// The channel is lazy (`Endpoint::connect_with_connector_lazy`): it connects at its
    /// first request, and a connect the network refuses fails that request with
    /// `UNAVAILABLE`, as a real channel's does, rather than the construction. Each call
    /// builds a new channel; clones of one share its connection, so a client keeps one.
    ///
    /// ```
    /// # use retrylab::prelude::*;
    /// use retrylab::scenario::{GrpcStatusSpec, Protocol, StepSpec};
    ///
    /// let scenario = Scenario::builder("tonic: UNAVAILABLE, then OK")
    ///     .endpoint("api", endpoint().protocol(Protocol::Http2).script([
    ///         StepSpec::grpc(GrpcStatusSpec::named("unavailable").unwrap()),
    ///         StepSpec::grpc(GrpcStatusSpec::named("ok").unwrap()),
    ///     ]))
    ///     .operation(post("api", "/echo.v1.Echo/Say"))
    ///     .build()
    ///     .unwrap();
    ///
    /// let report = scenario.run(|env: Env| async move {
    ///     // What generated client code does: a unary call with a codec on the channel.
    ///     let mut grpc = tonic::client::Grpc::new(env.tonic_channel());
    ///     let path = http::uri::PathAndQuery::from_static("/echo.v1.Echo/Say");
    ///     let mut codes = Vec::new();
    ///     for _ in 0..2 {
    ///         grpc.ready().await.map_err(|e| e.to_string())?;
    ///         let request = tonic::Request::new(bytes::Bytes::new());
    ///         let answer = grpc.unary(request, path.clone(), RawCodec).await;
    ///         codes.push(answer.err().map_or(tonic::Code::Ok, |status| status.code()));
    ///     }
    ///     Ok::<_, String>(format!("{codes:?}"))
    /// });
    /// let streams: Vec<_> = report.trace().attempts.iter().map(|a| a.stream_id).collect();
    /// assert_eq!(streams, [Some(1), Some(3)]);
    /// let codes: Vec<_> = report.trace().attempts.iter().map(|a| a.grpc.unwrap().name()).collect();
    /// assert_eq!(codes, ["UNAVAILABLE", "OK"]);
    ///
    /// // A codec that sends and reads messages as raw bytes (a real client uses prost's).
    /// #[derive(Default)]
    /// struct RawCodec;
    /// struct Raw;
    /// impl tonic::codec::Codec for RawCodec {
    ///     type Encode = bytes::Bytes;
    ///     type Decode = bytes::Bytes;
    ///     type Encoder = Raw;
    ///     type Decoder = Raw;
    ///     fn encoder(&mut self) -> Raw { Raw }
    ///     fn decoder(&mut self) -> Raw { Raw }
    /// }
    /// impl tonic::codec::Encoder for Raw {
    ///     type Item = bytes::Bytes;
    ///     type Error = tonic::Status;
    ///     fn encode(&mut self, item: bytes::Bytes, dst: &mut tonic::codec::EncodeBuf<'_>) -> Result<(), tonic::Status> {
    ///         bytes::BufMut::put(dst, item);
    ///         Ok(())
    ///     }
    /// }
    /// impl tonic::codec::Decoder for Raw {
    ///     type Item = bytes::Bytes;
    ///     type Error = tonic::Status;
    ///     fn decode(&mut self, src: &mut tonic::codec::DecodeBuf<'_>) -> Result<Option<bytes::Bytes>, tonic::Status> {
    ///         let n = bytes::Buf::remaining(src);
    ///         Ok(Some(bytes::Buf::copy_to_bytes(src, n)))
    ///     }
    /// }
    /// ```
    pub fn tonic_channel(&self) -> Channel {
        let url = self.url(&self.instance.operation.endpoint);
        // The URL is the harness's own (`http://<name>` or a loopback address), which a
        // URI always parses; `from_static` would need a 'static string.
        let endpoint = match Endpoint::from_shared(url) {
            Ok(endpoint) => endpoint,
            Err(_) => Endpoint::from_static("http://invalid"),
        };
        endpoint.connect_with_connector_lazy(self.connector())
    }
}
