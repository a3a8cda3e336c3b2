//! The HTTP/2 send buffer of a stream (`--http2-send-buffer-bytes`, issue 21): what the server
//! takes from a response body that its client does not read is bounded by the flag, not by the
//! client's flow-control window.
//!
//! Two servers of `connections::serve` (the function `serve` and the web table serve their
//! connections with), each with its settings from a parsed `serve` command line, answer every
//! request with an endless streaming body that counts the bytes the transport has pulled from it.
//! One client per server opens an 8 MiB window (stream and connection), takes the response's
//! headers and then stops reading its socket. The kernel's buffers are made small on both sides
//! (the listener's send buffer, inherited by its connections, and the client's receive buffer),
//! so once they are full what the server pulls more sits in HTTP/2's buffer for the stream.
//!
//! The control server's buffer is hyper's default (400 KiB, given with the flag): it pulls past
//! [`BOUND`]. The other runs with the flag's default (64 KiB) and its stream was opened first, so
//! it had longer to pull: it stays under the bound. Then its client reads again, and the stream
//! delivers far more than the bound (the bound holds data back, it does not stop the stream).

pub mod common;

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker, ready};
use std::time::Duration;

use clap::Parser;
use common::{poll_until, within};
use http_body::{Body as HttpBody, Frame};
use hyper_util::rt::{TokioExecutor, TokioIo};
use shuangkou::config::{DEFAULT_HTTP2_SEND_BUFFER_BYTES, ServeConfig};
use shuangkou::service::connections::{self, ConnectionSettings};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpSocket, TcpStream};
use tokio::sync::{oneshot, watch};
use tonic::body::Body;
use tonic::codegen::Bytes;
use tonic::codegen::http::{Request, Response};

/// What a stream whose client does not read may have taken from its body, with the flag's
/// default: 64 KiB in HTTP/2's buffer, one frame in its writer, the kernel's small buffers.
const BOUND: usize = 256 * 1024;

/// hyper's own send buffer (`max_send_buf_size` left unset).
const HYPER_DEFAULT: usize = 400 * 1024;

/// The client's stream and connection windows: far beyond both buffers.
const WINDOW: u32 = 8 << 20;

/// The kernel buffers asked for on both sides (Linux doubles them).
const KERNEL_BUFFER: u32 = 16 * 1024;

/// One chunk of the endless body.
const CHUNK: usize = 1024;
static ZEROS: [u8; CHUNK] = [0; CHUNK];

#[derive(Parser)]
struct Cli {
    #[command(flatten)]
    serve: ServeConfig,
}

/// The `serve` configuration of a command line's flags.
fn parsed(flags: &[&str]) -> ServeConfig {
    Cli::try_parse_from(std::iter::once("shuangkou-test").chain(flags.iter().copied()))
        .expect("serve flags")
        .serve
}

/// A response body without end, held back until `gate` opens; counts what is pulled from it.
struct Endless {
    gate: Option<Pin<Box<dyn Future<Output = ()> + Send>>>,
    pulled: Arc<AtomicUsize>,
}

impl HttpBody for Endless {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        if let Some(gate) = self.gate.as_mut() {
            ready!(gate.as_mut().poll(cx));
            self.gate = None;
        }
        self.pulled.fetch_add(CHUNK, Ordering::SeqCst);
        Poll::Ready(Some(Ok(Frame::data(Bytes::from_static(&ZEROS)))))
    }
}

/// A server of `connections::serve` with `config`'s settings whose every response is an
/// [`Endless`] body: its address, the bytes pulled, the gate, and its shutdown.
struct EndlessServer {
    addr: SocketAddr,
    pulled: Arc<AtomicUsize>,
    gate: watch::Sender<bool>,
    _shutdown: oneshot::Sender<()>,
}

async fn endless_server(config: &ServeConfig) -> EndlessServer {
    let socket = TcpSocket::new_v4().expect("socket");
    socket
        .set_send_buffer_size(KERNEL_BUFFER)
        .expect("SO_SNDBUF");
    socket
        .bind("127.0.0.1:0".parse().expect("address"))
        .expect("bind");
    let listener = socket.listen(16).expect("listen");
    let addr = listener.local_addr().expect("address");
    let pulled = Arc::new(AtomicUsize::new(0));
    let (gate, opened) = watch::channel(false);
    let counted = Arc::clone(&pulled);
    let service = tower::service_fn(move |_req: Request<Body>| {
        let mut opened = opened.clone();
        let pulled = Arc::clone(&counted);
        async move {
            let body = Endless {
                gate: Some(Box::pin(async move {
                    let _ = opened.wait_for(|open| *open).await;
                })),
                pulled,
            };
            Ok::<_, Infallible>(
                Response::builder()
                    .header("content-type", "application/grpc")
                    .body(Body::new(body))
                    .expect("response"),
            )
        }
    });
    let (tx, rx) = oneshot::channel::<()>();
    let settings = ConnectionSettings::of(config, true);
    tokio::spawn(connections::serve(
        listener,
        service,
        settings,
        async move {
            let _ = rx.await;
        },
    ));
    EndlessServer {
        addr,
        pulled,
        gate,
        _shutdown: tx,
    }
}

impl EndlessServer {
    fn pulled(&self) -> usize {
        self.pulled.load(Ordering::SeqCst)
    }
}

/// Whether the client reads its socket; closing wakes nothing, opening wakes the reader.
#[derive(Default)]
struct Valve {
    closed: AtomicBool,
    reader: Mutex<Option<Waker>>,
}

impl Valve {
    fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
    }

    fn open(&self) {
        self.closed.store(false, Ordering::SeqCst);
        if let Some(w) = self.reader.lock().expect("valve").take() {
            w.wake();
        }
    }
}

/// The client's socket: reads nothing while its valve is closed.
struct ValvedStream {
    inner: TcpStream,
    valve: Arc<Valve>,
}

impl AsyncRead for ValvedStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        if self.valve.closed.load(Ordering::SeqCst) {
            *self.valve.reader.lock().expect("valve") = Some(cx.waker().clone());
            // Opened between the check and the waker's registration: read now.
            if self.valve.closed.load(Ordering::SeqCst) {
                return Poll::Pending;
            }
        }
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl AsyncWrite for ValvedStream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// Opens a stream on `server` over HTTP/2 with a [`WINDOW`] window, takes its headers, closes the
/// valve, then lets the body flow: the unread response and the valve.
async fn unread_stream(server: &EndlessServer) -> (Response<hyper::body::Incoming>, Arc<Valve>) {
    let socket = TcpSocket::new_v4().expect("socket");
    socket
        .set_recv_buffer_size(KERNEL_BUFFER)
        .expect("SO_RCVBUF");
    let stream = socket.connect(server.addr).await.expect("connect");
    let valve = Arc::new(Valve::default());
    let io = TokioIo::new(ValvedStream {
        inner: stream,
        valve: Arc::clone(&valve),
    });
    let (mut sender, connection) = hyper::client::conn::http2::Builder::new(TokioExecutor::new())
        .initial_stream_window_size(WINDOW)
        .initial_connection_window_size(WINDOW)
        .handshake(io)
        .await
        .expect("HTTP/2 handshake");
    tokio::spawn(connection);
    let request = Request::post(format!("http://{}/endless/Stream", server.addr))
        .header("content-type", "application/grpc")
        .header("te", "trailers")
        .body(Body::empty())
        .expect("request");
    let response = within(
        Duration::from_secs(30),
        "the response's headers",
        sender.send_request(request),
    )
    .await
    .expect("response");
    valve.close();
    server.gate.send_replace(true);
    (response, valve)
}

#[test]
fn the_flag_and_its_default() {
    assert_eq!(
        parsed(&[]).http2_send_buffer_bytes,
        DEFAULT_HTTP2_SEND_BUFFER_BYTES
    );
    assert_eq!(DEFAULT_HTTP2_SEND_BUFFER_BYTES, 64 * 1024);
    assert_eq!(
        parsed(&["--http2-send-buffer-bytes", "1048576"]).http2_send_buffer_bytes,
        1 << 20
    );
    for refused in ["0", "16383", "-1", "64k", "4294967296"] {
        assert!(
            Cli::try_parse_from(["t", "--http2-send-buffer-bytes", refused]).is_err(),
            "{refused} accepted"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unread_stream_takes_no_more_than_the_send_buffer_from_its_body() {
    let bounded = endless_server(&parsed(&[])).await;
    let control = endless_server(&parsed(&[
        "--http2-send-buffer-bytes",
        &HYPER_DEFAULT.to_string(),
    ]))
    .await;
    let (mut response, valve) = unread_stream(&bounded).await;
    let (_control_response, _control_valve) = unread_stream(&control).await;

    let control_pulled = poll_until(
        Duration::from_secs(60),
        Duration::from_millis(20),
        "the control stream (hyper's buffer) to pull past the bound",
        async || (control.pulled() > BOUND).then(|| control.pulled()),
    )
    .await;
    let pulled = bounded.pulled();
    eprintln!(
        "pulled with the default buffer: {pulled} bytes; with hyper's: {control_pulled} (and on)"
    );
    assert!(pulled > 0, "the bounded stream pulled nothing: not live");
    assert!(
        pulled <= BOUND,
        "an unread stream with a {DEFAULT_HTTP2_SEND_BUFFER_BYTES}-byte send buffer pulled {pulled} bytes (bound {BOUND}; hyper's buffer: {control_pulled})"
    );

    // Reading again, the stream delivers far beyond the bound.
    valve.open();
    let mut read = 0usize;
    within(Duration::from_secs(60), "4 MiB of the stream", async {
        while read < 4 << 20 {
            let frame = std::future::poll_fn(|cx| Pin::new(response.body_mut()).poll_frame(cx))
                .await
                .expect("the stream goes on")
                .expect("a frame");
            read += frame.data_ref().map_or(0, Bytes::len);
        }
    })
    .await;
    assert!(
        bounded.pulled() >= read,
        "read {read} of {}",
        bounded.pulled()
    );
}
