//! An address or a network of them (`10.0.0.7`, `172.16.0.0/12`, `fd00::/8`), for
//! `auth.trusted_proxies`: behind a container network the proxy's address is one of a
//! range, not known in advance.

use std::fmt;
use std::net::IpAddr;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The addresses whose first `prefix` bits are `base`'s.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Network {
    base: IpAddr,
    prefix: u8,
}

impl Network {
    /// Whether `ip` is in this network (an IPv4 address is never in an IPv6 network).
    pub fn contains(&self, ip: IpAddr) -> bool {
        match (self.base, ip) {
            (IpAddr::V4(base), IpAddr::V4(ip)) => same_prefix(
                u128::from(base.to_bits()) << 96,
                u128::from(ip.to_bits()) << 96,
                self.prefix,
            ),
            (IpAddr::V6(base), IpAddr::V6(ip)) => {
                same_prefix(base.to_bits(), ip.to_bits(), self.prefix)
            }
            _ => false,
        }
    }
}

/// Whether the first `prefix` bits of `a` and `b` agree.
fn same_prefix(a: u128, b: u128, prefix: u8) -> bool {
    let mask = u128::MAX.checked_shl(128 - u32::from(prefix)).unwrap_or(0);
    a & mask == b & mask
}

impl FromStr for Network {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (address, prefix) = match s.split_once('/') {
            Some((address, prefix)) => (address, Some(prefix)),
            None => (s, None),
        };
        let base: IpAddr = address
            .parse()
            .map_err(|_| format!("`{s}` is not an IP address or a network such as 10.0.0.0/8"))?;
        let most = if base.is_ipv4() { 32 } else { 128 };
        let prefix = match prefix {
            None => most,
            Some(p) => p
                .parse::<u8>()
                .ok()
                .filter(|p| *p <= most)
                .ok_or_else(|| format!("`{s}`: the prefix length must be from 0 to {most}"))?,
        };
        Ok(Network { base, prefix })
    }
}

impl fmt::Display for Network {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let most = if self.base.is_ipv4() { 32 } else { 128 };
        match self.prefix == most {
            true => write!(f, "{}", self.base),
            false => write!(f, "{}/{}", self.base, self.prefix),
        }
    }
}

impl Serialize for Network {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Network {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn net(s: &str) -> Network {
        s.parse().unwrap()
    }

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn a_network_holds_the_addresses_that_share_its_prefix() {
        let docker = net("172.16.0.0/12");
        assert!(docker.contains(ip("172.16.0.1")));
        assert!(docker.contains(ip("172.31.255.255")));
        assert!(!docker.contains(ip("172.32.0.0")));
        assert!(
            !docker.contains(ip("::ffff:172.16.0.1")),
            "no family crossing"
        );
        let one = net("10.1.2.3");
        assert!(one.contains(ip("10.1.2.3")) && !one.contains(ip("10.1.2.4")));
        assert!(net("0.0.0.0/0").contains(ip("8.8.8.8")));
        assert!(net("fd00::/8").contains(ip("fd12::1")));
        assert!(!net("fd00::/8").contains(ip("fe80::1")));
        assert!(net("::1").contains(ip("::1")));
    }

    #[test]
    fn networks_read_back_as_written_and_refuse_what_is_not_one() {
        for s in ["172.16.0.0/12", "10.1.2.3", "fd00::/8", "::1"] {
            assert_eq!(net(s).to_string(), s);
        }
        for bad in [
            "172.16.0.0/33",
            "fd00::/129",
            "10.0.0.0/x",
            "nowhere",
            "10.0.0/8",
        ] {
            assert!(bad.parse::<Network>().is_err(), "{bad}");
        }
    }
}
