//! A browser's subscription as a client hands it over, checked before it is kept: an
//! endpoint the server may post to, and keys a message can be encrypted with. Refused
//! with `invalid_subscription`, saying which part is wrong.

use std::net::IpAddr;

use base64ct::{Base64UrlUnpadded, Encoding};
use hyper::Uri;
use p256::PublicKey;

use crate::protocol::{ErrorCode, Refusal};

/// The longest endpoint taken; the push services' are a few hundred bytes.
pub const MAX_ENDPOINT_BYTES: usize = 1024;

/// A subscription's parts, checked.
pub struct Checked {
    pub endpoint: Uri,
    pub p256dh: PublicKey,
    pub auth: [u8; 16],
}

fn refuse(why: impl std::fmt::Display) -> Refusal {
    Refusal::new(
        ErrorCode::InvalidSubscription,
        format!("the push subscription is not usable: {why}"),
    )
}

/// Whether `ip` is an address anyone on the Internet reaches: not this machine, a
/// private or link-local network, or an address that names no host.
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            !(v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_broadcast()
                || v4.is_multicast()
                || v4.octets()[0] == 0
                || (v4.octets()[0] == 100 && v4.octets()[1] & 0xc0 == 64))
        }
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => is_public(IpAddr::V4(v4)),
            None => {
                !(v6.is_loopback()
                    || v6.is_unspecified()
                    || v6.is_multicast()
                    || v6.is_unique_local()
                    || v6.is_unicast_link_local())
            }
        },
    }
}

/// Reads an endpoint: an `https://` URL with a host name (`http://` and addresses on
/// this machine or a private network too when `allow_http`), no login in it.
pub fn endpoint(text: &str, allow_http: bool) -> Result<Uri, Refusal> {
    if text.len() > MAX_ENDPOINT_BYTES {
        return Err(refuse(format!(
            "the endpoint is over {MAX_ENDPOINT_BYTES} bytes"
        )));
    }
    let uri: Uri = text
        .parse()
        .map_err(|_| refuse("the endpoint is not a URL"))?;
    match uri.scheme_str() {
        Some("https") => {}
        Some("http") if allow_http => {}
        _ => return Err(refuse("the endpoint is not an https:// URL")),
    }
    let Some(authority) = uri.authority() else {
        return Err(refuse("the endpoint names no host"));
    };
    if authority.as_str().contains('@') {
        return Err(refuse("the endpoint holds a login"));
    }
    let host = authority.host().trim_matches(['[', ']']);
    let local = match host.parse::<IpAddr>() {
        Ok(ip) => !is_public(ip),
        Err(_) => host.eq_ignore_ascii_case("localhost") || host.is_empty(),
    };
    if local && !allow_http {
        return Err(refuse(
            "the endpoint is on this machine or a private network",
        ));
    }
    Ok(uri)
}

/// Checks a subscription: its endpoint, its P-256 public key (65 bytes, uncompressed,
/// base64url) and its auth secret (16 bytes, base64url).
pub fn check(
    endpoint_text: &str,
    p256dh: &str,
    auth: &str,
    allow_http: bool,
) -> Result<Checked, Refusal> {
    let endpoint = endpoint(endpoint_text, allow_http)?;
    let key = Base64UrlUnpadded::decode_vec(p256dh.trim_end_matches('='))
        .ok()
        .filter(|k| k.len() == 65)
        .ok_or_else(|| refuse("keys.p256dh is not 65 bytes of base64url"))?;
    let p256dh = PublicKey::from_sec1_bytes(&key)
        .map_err(|_| refuse("keys.p256dh is not a P-256 public key"))?;
    let auth = Base64UrlUnpadded::decode_vec(auth.trim_end_matches('='))
        .ok()
        .and_then(|a| <[u8; 16]>::try_from(a).ok())
        .ok_or_else(|| refuse("keys.auth is not 16 bytes of base64url"))?;
    Ok(Checked {
        endpoint,
        p256dh,
        auth,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str =
        "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4";
    const AUTH: &str = "BTBZMqHH6r4Tts7J_aSIgg";

    #[test]
    fn a_push_services_subscription_is_taken() {
        let ok = check("https://push.example.net/wpush/v2/abc", KEY, AUTH, false)
            .expect("a usable subscription");
        assert_eq!(ok.endpoint.host(), Some("push.example.net"));
        assert!(check("http://127.0.0.1:9/p", KEY, AUTH, true).is_ok());
    }

    #[test]
    fn bad_subscriptions_are_refused_with_their_code() {
        let long = format!(
            "https://push.example.net/{}",
            "a".repeat(MAX_ENDPOINT_BYTES)
        );
        let bad_key = KEY.replace("BCVx", "BCVy");
        for (endpoint, key, auth) in [
            ("http://push.example.net/a", KEY, AUTH),
            ("ftp://push.example.net/a", KEY, AUTH),
            ("not a url", KEY, AUTH),
            ("/relative", KEY, AUTH),
            ("https://user:pw@push.example.net/a", KEY, AUTH),
            ("https://127.0.0.1/a", KEY, AUTH),
            ("https://[::1]/a", KEY, AUTH),
            ("https://10.1.2.3/a", KEY, AUTH),
            ("https://localhost/a", KEY, AUTH),
            (long.as_str(), KEY, AUTH),
            ("https://push.example.net/a", "", AUTH),
            ("https://push.example.net/a", &KEY[..40], AUTH),
            ("https://push.example.net/a", bad_key.as_str(), AUTH),
            ("https://push.example.net/a", KEY, "BTBZMqHH6r4Tts7J"),
            ("https://push.example.net/a", KEY, "!!!"),
        ] {
            let refused = check(endpoint, key, auth, false).err();
            assert_eq!(
                refused.map(|r| r.code),
                Some(ErrorCode::InvalidSubscription),
                "{endpoint} {key} {auth}"
            );
        }
    }

    #[test]
    fn only_addresses_anyone_reaches_are_public() {
        for (ip, public) in [
            ("8.8.8.8", true),
            ("2001:4860:4860::8888", true),
            ("127.0.0.1", false),
            ("192.168.1.1", false),
            ("172.16.0.1", false),
            ("169.254.1.1", false),
            ("100.64.0.1", false),
            ("0.0.0.0", false),
            ("::1", false),
            ("fd00::1", false),
            ("fe80::1", false),
            ("::ffff:10.0.0.1", false),
        ] {
            let ip: IpAddr = ip.parse().expect("an address");
            assert_eq!(is_public(ip), public, "{ip}");
        }
    }
}
