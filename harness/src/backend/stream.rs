//! The connection a client gets from `env.connector()`, on any backend.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use hyper_util::client::legacy::connect::{Connected, Connection};
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

use super::sim::SimStream;

/// A connection to an endpoint: on the sim network, or a TCP connection on the real backend.
/// Implements hyper's and tokio's IO traits and hyper-util's `Connection`.
#[derive(Debug)]
pub struct Stream(Transport);

#[derive(Debug)]
enum Transport {
    Sim(SimStream),
    Real(TokioIo<TcpStream>),
    #[cfg(feature = "turmoil")]
    Turmoil(TokioIo<super::turmoil::TurmoilStream>),
}

impl From<SimStream> for Stream {
    fn from(stream: SimStream) -> Stream {
        Stream(Transport::Sim(stream))
    }
}

impl From<TokioIo<TcpStream>> for Stream {
    fn from(stream: TokioIo<TcpStream>) -> Stream {
        Stream(Transport::Real(stream))
    }
}

#[cfg(feature = "turmoil")]
impl From<TokioIo<super::turmoil::TurmoilStream>> for Stream {
    fn from(stream: TokioIo<super::turmoil::TurmoilStream>) -> Stream {
        Stream(Transport::Turmoil(stream))
    }
}

impl hyper::rt::Read for Stream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: hyper::rt::ReadBufCursor<'_>,
    ) -> Poll<io::Result<()>> {
        match &mut self.get_mut().0 {
            Transport::Sim(s) => hyper::rt::Read::poll_read(Pin::new(s), cx, buf),
            Transport::Real(s) => hyper::rt::Read::poll_read(Pin::new(s), cx, buf),
            #[cfg(feature = "turmoil")]
            Transport::Turmoil(s) => hyper::rt::Read::poll_read(Pin::new(s), cx, buf),
        }
    }
}

impl hyper::rt::Write for Stream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match &mut self.get_mut().0 {
            Transport::Sim(s) => hyper::rt::Write::poll_write(Pin::new(s), cx, buf),
            Transport::Real(s) => hyper::rt::Write::poll_write(Pin::new(s), cx, buf),
            #[cfg(feature = "turmoil")]
            Transport::Turmoil(s) => hyper::rt::Write::poll_write(Pin::new(s), cx, buf),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match &mut self.get_mut().0 {
            Transport::Sim(s) => hyper::rt::Write::poll_flush(Pin::new(s), cx),
            Transport::Real(s) => hyper::rt::Write::poll_flush(Pin::new(s), cx),
            #[cfg(feature = "turmoil")]
            Transport::Turmoil(s) => hyper::rt::Write::poll_flush(Pin::new(s), cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match &mut self.get_mut().0 {
            Transport::Sim(s) => hyper::rt::Write::poll_shutdown(Pin::new(s), cx),
            Transport::Real(s) => hyper::rt::Write::poll_shutdown(Pin::new(s), cx),
            #[cfg(feature = "turmoil")]
            Transport::Turmoil(s) => hyper::rt::Write::poll_shutdown(Pin::new(s), cx),
        }
    }
}

impl AsyncRead for Stream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match &mut self.get_mut().0 {
            Transport::Sim(s) => AsyncRead::poll_read(Pin::new(s), cx, buf),
            Transport::Real(s) => AsyncRead::poll_read(Pin::new(s.inner_mut()), cx, buf),
            #[cfg(feature = "turmoil")]
            Transport::Turmoil(s) => AsyncRead::poll_read(Pin::new(s.inner_mut()), cx, buf),
        }
    }
}

impl AsyncWrite for Stream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match &mut self.get_mut().0 {
            Transport::Sim(s) => AsyncWrite::poll_write(Pin::new(s), cx, buf),
            Transport::Real(s) => AsyncWrite::poll_write(Pin::new(s.inner_mut()), cx, buf),
            #[cfg(feature = "turmoil")]
            Transport::Turmoil(s) => AsyncWrite::poll_write(Pin::new(s.inner_mut()), cx, buf),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match &mut self.get_mut().0 {
            Transport::Sim(s) => AsyncWrite::poll_flush(Pin::new(s), cx),
            Transport::Real(s) => AsyncWrite::poll_flush(Pin::new(s.inner_mut()), cx),
            #[cfg(feature = "turmoil")]
            Transport::Turmoil(s) => AsyncWrite::poll_flush(Pin::new(s.inner_mut()), cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match &mut self.get_mut().0 {
            Transport::Sim(s) => AsyncWrite::poll_shutdown(Pin::new(s), cx),
            Transport::Real(s) => AsyncWrite::poll_shutdown(Pin::new(s.inner_mut()), cx),
            #[cfg(feature = "turmoil")]
            Transport::Turmoil(s) => AsyncWrite::poll_shutdown(Pin::new(s.inner_mut()), cx),
        }
    }
}

impl Connection for Stream {
    fn connected(&self) -> Connected {
        match &self.0 {
            Transport::Sim(s) => s.connected(),
            Transport::Real(s) => s.connected(),
            // turmoil's streams carry no connection metadata hyper-util reads.
            #[cfg(feature = "turmoil")]
            Transport::Turmoil(_) => Connected::new(),
        }
    }
}
