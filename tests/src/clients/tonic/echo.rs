//! The test service of `tests/proto/retrylab/test/v1/echo.proto`, by hand: its two messages
//! as prost derives them, and a client with the one method, as tonic's generated clients
//! are built (a unary call on `tonic::client::Grpc` with prost's codec).
//!
//! Written by hand rather than generated at build time, because tonic-build runs `protoc`,
//! which CI machines do not have; the service is small enough that the proto and this file
//! are kept in step by reading them side by side (and the test of `tests/tonic.rs` decodes
//! a `SayResponse` the endpoint sends as bytes written from the proto's field numbers).

use http::uri::PathAndQuery;
use tonic::transport::Channel;
use tonic::{IntoRequest, Response, Status};

/// `retrylab.test.v1.SayRequest`.
#[derive(Clone, PartialEq, ::prost::Message)]
pub struct SayRequest {
    /// `string text = 1;`
    #[prost(string, tag = "1")]
    pub text: String,
}

/// `retrylab.test.v1.SayResponse`.
#[derive(Clone, PartialEq, ::prost::Message)]
pub struct SayResponse {
    /// `string text = 1;`
    #[prost(string, tag = "1")]
    pub text: String,
}

/// The method's path: `/<package>.<Service>/<Method>`, where a scenario's route matches it.
pub const SAY: &str = "/retrylab.test.v1.Echo/Say";

/// A client of `retrylab.test.v1.Echo`.
#[derive(Clone, Debug)]
pub struct EchoClient {
    inner: tonic::client::Grpc<Channel>,
}

impl EchoClient {
    /// A client on `channel` (`env.tonic_channel()`).
    pub fn new(channel: Channel) -> EchoClient {
        EchoClient {
            inner: tonic::client::Grpc::new(channel),
        }
    }

    /// `rpc Say(SayRequest) returns (SayResponse)`.
    pub async fn say(
        &mut self,
        request: impl IntoRequest<SayRequest>,
    ) -> Result<Response<SayResponse>, Status> {
        self.inner
            .ready()
            .await
            .map_err(|e| Status::unavailable(format!("channel not ready: {e}")))?;
        let codec = tonic_prost::ProstCodec::<SayRequest, SayResponse>::default();
        self.inner
            .unary(
                request.into_request(),
                PathAndQuery::from_static(SAY),
                codec,
            )
            .await
    }
}
