//! Who a request comes from: the socket's peer, or, behind a trusted reverse proxy, the
//! client it names in `X-Forwarded-For`. Per-address limits (logins, sign-ups,
//! connections) count by this address, so a proxy that is not trusted makes them
//! server-wide: that case is warned of in the log.

use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use axum::http::HeaderMap;

use crate::config::Network;

/// How often at most the log repeats that a loopback peer sent `X-Forwarded-For`
/// without being trusted.
const UNTRUSTED_PROXY_WARNING: Duration = Duration::from_secs(3600);

/// The client addresses of requests, as the configured proxies tell them.
#[derive(Debug)]
pub struct Peers {
    proxies: Vec<Network>,
    /// When the untrusted-proxy warning was last logged.
    warned: Mutex<Option<Instant>>,
}

impl Peers {
    pub fn new(trusted_proxies: &[Network]) -> Peers {
        Peers {
            proxies: trusted_proxies.to_vec(),
            warned: Mutex::new(None),
        }
    }

    /// Whether `ip` is one of `auth.trusted_proxies`.
    pub fn trusted(&self, ip: IpAddr) -> bool {
        self.proxies.iter().any(|n| n.contains(ip))
    }

    /// The client's address: the socket's peer, or, when the peer is one of
    /// `auth.trusted_proxies`, the nearest address in `X-Forwarded-For` that is not.
    pub fn client(&self, peer: IpAddr, headers: &HeaderMap) -> IpAddr {
        let forwarded = headers
            .get_all("x-forwarded-for")
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .map(str::trim)
            .collect::<Vec<_>>();
        if !self.trusted(peer) {
            if !forwarded.is_empty() && peer.is_loopback() {
                self.warn_untrusted(peer);
            }
            return peer;
        }
        let mut address = peer;
        for hop in forwarded.iter().rev() {
            match hop.parse::<IpAddr>() {
                Ok(ip) if self.trusted(ip) => address = ip,
                Ok(ip) => return ip,
                Err(_) => return address,
            }
        }
        address
    }

    /// A proxy on this machine forwards clients, but is not trusted: every client then
    /// has its address, and one client's failed logins lock everyone out. Said at most
    /// once an hour.
    fn warn_untrusted(&self, peer: IpAddr) {
        let mut warned = self.warned.lock().unwrap_or_else(|e| e.into_inner());
        if warned.is_some_and(|at| at.elapsed() < UNTRUSTED_PROXY_WARNING) {
            return;
        }
        *warned = Some(Instant::now());
        tracing::warn!(
            %peer,
            "a request from this machine carries X-Forwarded-For, but {peer} is not in auth.trusted_proxies: every client behind this proxy counts as {peer}, so the per-address limits (failed logins, sign-ups, connections) are shared by all of them; list the proxy in auth.trusted_proxies (deploy/README.md, \"Reverse proxy\")"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(xff: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert("x-forwarded-for", xff.parse().unwrap());
        h
    }

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn only_a_trusted_peer_names_the_client() {
        let peers = Peers::new(&["127.0.0.1".parse().unwrap(), "10.0.0.0/8".parse().unwrap()]);
        let h = headers("203.0.113.7, 10.0.0.3");
        assert_eq!(peers.client(ip("127.0.0.1"), &h), ip("203.0.113.7"));
        assert_eq!(peers.client(ip("198.51.100.1"), &h), ip("198.51.100.1"));
        assert_eq!(
            peers.client(ip("127.0.0.1"), &headers("junk, 10.0.0.3")),
            ip("10.0.0.3")
        );
        assert_eq!(
            peers.client(ip("127.0.0.1"), &HeaderMap::new()),
            ip("127.0.0.1")
        );
    }
}
