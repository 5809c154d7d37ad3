//! One push request (RFC 8030 §5): a POST of the encrypted body to a browser's endpoint,
//! over HTTP/1.1 with TLS (the system's roots), on a connection of its own, within a
//! timeout. The endpoint's path is the browser's capability: no error here names it.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::header::{HeaderName, HeaderValue};
use hyper::{Request, StatusCode, Uri};
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;
use tokio_rustls::rustls::pki_types::ServerName;
use tokio_rustls::rustls::{ClientConfig, RootCertStore};

use super::PushError;
use super::subscription::is_public;

/// What the push service said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Taken (201, or any 2xx).
    Accepted,
    /// 404 or 410: the subscription has expired or was dropped by the browser.
    Gone,
    /// Any other answer, by status.
    Refused(StatusCode),
    /// No answer: why, in words without the endpoint.
    Failed(String),
}

/// Makes push requests.
pub struct Sender {
    tls: TlsConnector,
    timeout: Duration,
    /// Whether endpoints may be on this machine or a private network (tests only).
    allow_local: bool,
}

/// The system's trusted roots; a certificate that cannot be read is skipped.
fn roots() -> RootCertStore {
    let mut roots = RootCertStore::empty();
    let found = rustls_native_certs::load_native_certs();
    let (added, _) = roots.add_parsable_certificates(found.certs);
    if added == 0 {
        tracing::warn!(
            "no trusted root certificates were found: pushes to https:// endpoints will fail"
        );
    }
    roots
}

impl Sender {
    pub fn new(timeout: Duration, allow_local: bool) -> Result<Sender, PushError> {
        let provider = Arc::new(tokio_rustls::rustls::crypto::ring::default_provider());
        let config = ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| PushError::Tls(e.to_string()))?
            .with_root_certificates(roots())
            .with_no_client_auth();
        Ok(Sender {
            tls: TlsConnector::from(Arc::new(config)),
            timeout,
            allow_local,
        })
    }

    /// POSTs `body` to `endpoint` with `headers`.
    pub async fn post(
        &self,
        endpoint: &Uri,
        headers: Vec<(HeaderName, String)>,
        body: Vec<u8>,
    ) -> Outcome {
        let status = match tokio::time::timeout(
            self.timeout,
            self.exchange(endpoint, headers, body),
        )
        .await
        {
            Ok(Ok(status)) => status,
            Ok(Err(why)) => return Outcome::Failed(why),
            Err(_) => return Outcome::Failed(format!("no answer within {:?}", self.timeout)),
        };
        match status {
            s if s.is_success() => Outcome::Accepted,
            StatusCode::NOT_FOUND | StatusCode::GONE => Outcome::Gone,
            s => Outcome::Refused(s),
        }
    }

    /// The endpoint's first address this sender may reach.
    async fn address(&self, host: &str, port: u16) -> Result<SocketAddr, String> {
        let found = tokio::net::lookup_host((host, port))
            .await
            .map_err(|e| format!("the host cannot be resolved: {e}"))?;
        found
            .into_iter()
            .find(|a| self.allow_local || is_public(a.ip()))
            .ok_or_else(|| "the host has no public address".to_string())
    }

    async fn exchange(
        &self,
        endpoint: &Uri,
        headers: Vec<(HeaderName, String)>,
        body: Vec<u8>,
    ) -> Result<StatusCode, String> {
        let https = endpoint.scheme_str() == Some("https");
        let authority = endpoint
            .authority()
            .ok_or_else(|| "the endpoint names no host".to_string())?;
        let host = authority.host().trim_matches(['[', ']']);
        let port = authority.port_u16().unwrap_or(if https { 443 } else { 80 });
        let address = self.address(host, port).await?;
        let tcp = TcpStream::connect(address)
            .await
            .map_err(|e| format!("cannot connect: {e}"))?;
        let path = endpoint
            .path_and_query()
            .map_or("/", |p| p.as_str())
            .to_string();
        let mut request = Request::post(path).header(hyper::header::HOST, authority.as_str());
        for (name, value) in headers {
            let value = HeaderValue::try_from(value).map_err(|_| format!("a bad {name} header"))?;
            request = request.header(name, value);
        }
        let request = request
            .body(Full::new(Bytes::from(body)))
            .map_err(|e| format!("the request cannot be made: {e}"))?;
        if !https {
            return exchange_over(tcp, request).await;
        }
        let name = ServerName::try_from(host.to_string())
            .map_err(|_| "the host is not a TLS server name".to_string())?;
        let tls = self
            .tls
            .connect(name, tcp)
            .await
            .map_err(|e| format!("TLS failed: {e}"))?;
        exchange_over(tls, request).await
    }
}

/// Sends `request` over `io` with HTTP/1.1 and reads the answer's status.
async fn exchange_over<I>(io: I, request: Request<Full<Bytes>>) -> Result<StatusCode, String>
where
    I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(io))
        .await
        .map_err(|e| format!("HTTP failed: {e}"))?;
    let driver = tokio::spawn(connection);
    let answer = sender.send_request(request).await;
    driver.abort();
    answer
        .map(|r| r.status())
        .map_err(|e| format!("HTTP failed: {e}"))
}
