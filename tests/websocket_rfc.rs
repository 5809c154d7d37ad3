//! The server's side of RFC 6455 at the frame level: a client's close is answered with a
//! close, and frames the RFC forbids end the connection with the close code it asks for
//! (1002 for a protocol error, 1007 for text that is not UTF-8), never a silent drop.
//!
//! The client here is a plain TCP socket that does the upgrade by hand and writes
//! hand-made frames, since a WebSocket library would refuse to send them.

mod common;

use common::{TestServer, WAIT};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const TEXT: u8 = 0x1;
const BINARY: u8 = 0x2;
const CLOSE: u8 = 0x8;
const PING: u8 = 0x9;
const FIN: u8 = 0x80;
const RSV1: u8 = 0x40;

/// A WebSocket connection spoken byte by byte.
struct Raw {
    tcp: TcpStream,
    /// Bytes read but not yet taken as frames.
    buf: Vec<u8>,
}

impl Raw {
    async fn connect(server: &TestServer) -> Raw {
        let addr = server.server.as_ref().expect("running").addr();
        let mut tcp = TcpStream::connect(addr).await.expect("tcp connects");
        let request = format!(
            "GET /ws HTTP/1.1\r\nHost: {addr}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
             Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
        );
        tcp.write_all(request.as_bytes()).await.expect("write");
        let mut raw = Raw {
            tcp,
            buf: Vec::new(),
        };
        let end = loop {
            if let Some(i) = raw.buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break i + 4;
            }
            assert!(raw.fill().await, "the server hung up during the upgrade");
        };
        let head = String::from_utf8_lossy(&raw.buf[..end]).to_string();
        assert!(head.starts_with("HTTP/1.1 101"), "no upgrade: {head}");
        raw.buf.drain(..end);
        raw
    }

    /// Reads more bytes; false at the end of the stream.
    async fn fill(&mut self) -> bool {
        let mut chunk = [0u8; 4096];
        match tokio::time::timeout(WAIT, self.tcp.read(&mut chunk)).await {
            Ok(Ok(0)) | Ok(Err(_)) => false,
            Ok(Ok(n)) => {
                self.buf.extend_from_slice(&chunk[..n]);
                true
            }
            Err(_) => panic!("the server said nothing within {WAIT:?}"),
        }
    }

    /// The next frame from the server (opcode and payload), or `None` when the stream
    /// ended first.
    async fn frame(&mut self) -> Option<(u8, Vec<u8>)> {
        loop {
            if let Some((len, header)) = self.complete_frame() {
                let opcode = self.buf[0] & 0x0f;
                let payload = self.buf[header..header + len].to_vec();
                self.buf.drain(..header + len);
                return Some((opcode, payload));
            }
            if !self.fill().await {
                return None;
            }
        }
    }

    /// The payload length and header length of a whole frame at the start of `buf`.
    fn complete_frame(&self) -> Option<(usize, usize)> {
        let b = &self.buf;
        if b.len() < 2 {
            return None;
        }
        assert_eq!(b[1] & 0x80, 0, "a server must not mask its frames");
        let (len, header) = match b[1] & 0x7f {
            126 if b.len() >= 4 => (usize::from(u16::from_be_bytes([b[2], b[3]])), 4),
            127 if b.len() >= 10 => {
                let n = u64::from_be_bytes(b[2..10].try_into().ok()?);
                (usize::try_from(n).ok()?, 10)
            }
            126 | 127 => return None,
            n => (usize::from(n), 2),
        };
        (b.len() >= header + len).then_some((len, header))
    }

    /// Skips to the server's close frame and returns its code; `None` when the
    /// connection ended without one.
    async fn close_code(&mut self) -> Option<u16> {
        loop {
            let (opcode, payload) = self.frame().await?;
            if opcode == CLOSE {
                assert!(payload.len() >= 2, "a close frame without a code");
                return Some(u16::from_be_bytes([payload[0], payload[1]]));
            }
        }
    }

    async fn send(&mut self, bytes: &[u8]) {
        self.tcp.write_all(bytes).await.expect("write");
    }
}

/// A client frame: `first` is the FIN/RSV/opcode byte; `masked` as clients must.
fn frame(first: u8, payload: &[u8], masked: bool) -> Vec<u8> {
    let mask = [0x37, 0xfa, 0x21, 0x3d];
    let mut out = vec![first];
    let bit = if masked { 0x80 } else { 0 };
    match payload.len() {
        n if n < 126 => out.push(bit | n as u8),
        n => {
            out.push(bit | 126);
            out.extend_from_slice(&(n as u16).to_be_bytes());
        }
    }
    if masked {
        out.extend_from_slice(&mask);
        out.extend(payload.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
    } else {
        out.extend_from_slice(payload);
    }
    out
}

/// Connects, sends `bytes` and returns the close code the server answers with.
async fn answer_to(bytes: &[u8]) -> Option<u16> {
    let server = TestServer::start().await;
    let mut raw = Raw::connect(&server).await;
    // The connection works before the bad frame: `welcome` comes first.
    let (opcode, welcome) = raw.frame().await.expect("welcome");
    assert_eq!(opcode, TEXT);
    assert!(String::from_utf8_lossy(&welcome).contains(r#""type":"welcome""#));
    raw.send(bytes).await;
    raw.close_code().await
}

#[tokio::test]
async fn a_client_close_is_answered_with_a_close() {
    let mut payload = 1000u16.to_be_bytes().to_vec();
    payload.extend_from_slice(b"bye");
    assert_eq!(
        answer_to(&frame(FIN | CLOSE, &payload, true)).await,
        Some(1000)
    );
}

#[tokio::test]
async fn an_unmasked_client_frame_is_a_protocol_error() {
    let bytes = frame(FIN | TEXT, br#"{"type":"ping"}"#, false);
    assert_eq!(answer_to(&bytes).await, Some(1002));
}

#[tokio::test]
async fn a_reserved_bit_without_an_extension_is_a_protocol_error() {
    let bytes = frame(FIN | RSV1 | TEXT, br#"{"type":"ping"}"#, true);
    assert_eq!(answer_to(&bytes).await, Some(1002));
}

#[tokio::test]
async fn a_reserved_opcode_is_a_protocol_error() {
    assert_eq!(answer_to(&frame(FIN | 0x3, b"x", true)).await, Some(1002));
}

#[tokio::test]
async fn a_control_frame_over_125_bytes_is_a_protocol_error() {
    assert_eq!(
        answer_to(&frame(FIN | PING, &[7; 200], true)).await,
        Some(1002)
    );
}

#[tokio::test]
async fn a_continuation_without_a_start_is_a_protocol_error() {
    assert_eq!(answer_to(&frame(FIN, b"more", true)).await, Some(1002));
}

#[tokio::test]
async fn text_that_is_not_utf8_closes_with_1007() {
    let bytes = frame(FIN | TEXT, &[b'"', 0xff, 0xfe, b'"'], true);
    assert_eq!(answer_to(&bytes).await, Some(1007));
}

#[tokio::test]
async fn good_frames_still_work_over_the_raw_socket() {
    // The control case: the same hand-made framing, well formed, gets a `pong`.
    let server = TestServer::start().await;
    let mut raw = Raw::connect(&server).await;
    raw.frame().await.expect("welcome");
    raw.send(&frame(FIN | TEXT, br#"{"type":"ping","id":1}"#, true))
        .await;
    loop {
        let (opcode, payload) = raw.frame().await.expect("a reply");
        if opcode == TEXT {
            let text = String::from_utf8(payload).expect("UTF-8");
            assert!(text.contains(r#""type":"pong""#), "{text}");
            break;
        }
    }
}

#[tokio::test]
async fn binary_frames_count_against_the_rate_and_a_flood_of_them_is_closed() {
    let server = TestServer::start_with(|c| {
        c.limits.messages_per_second = 1;
        c.limits.burst = 2;
        c.limits.flood_close_after = 5;
    })
    .await;
    let mut raw = Raw::connect(&server).await;
    raw.frame().await.expect("welcome");
    let flood = frame(FIN | BINARY, b"\x01\x02", true).repeat(50);
    raw.send(&flood).await;
    let (mut bad_requests, mut rate_limited) = (0, 0);
    let close = loop {
        let (opcode, payload) = raw.frame().await.expect("answers, then a close");
        match opcode {
            TEXT => {
                let text = String::from_utf8(payload).expect("UTF-8");
                if text.contains(r#""code":"rate_limited""#) {
                    rate_limited += 1;
                } else {
                    assert!(text.contains(r#""code":"bad_request""#), "{text}");
                    bad_requests += 1;
                }
            }
            CLOSE => break u16::from_be_bytes([payload[0], payload[1]]),
            _ => {}
        }
    };
    assert_eq!(close, 4029, "a binary flood is closed as a text one is");
    assert!(rate_limited >= 5, "{rate_limited} rate_limited");
    assert!(
        bad_requests < 50,
        "not every binary frame was answered on its own: {bad_requests}"
    );
}
