//! A push message's body: the payload encrypted for one browser (RFC 8291), in the
//! `aes128gcm` content coding (RFC 8188), in a single record. Pure: the caller brings the
//! sender's one-use key and the salt, so the RFC's example can be checked byte for byte.

use aes_gcm::aead::Aead;
use aes_gcm::{Aes128Gcm, KeyInit};
use hkdf::Hkdf;
use p256::{PublicKey, SecretKey};
use sha2::Sha256;

/// The record size written in the header: the one record must fit in it.
pub const RECORD_SIZE: u32 = 4096;
/// GCM's tag, and the delimiter byte that ends the last record's plaintext.
const OVERHEAD: usize = 16 + 1;
/// The longest payload one record carries.
pub const MAX_PLAINTEXT: usize = RECORD_SIZE as usize - OVERHEAD;

/// Why a body could not be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EceError {
    #[error("the payload is {0} bytes, over the {MAX_PLAINTEXT} one record carries")]
    TooLarge(usize),
    #[error("the key schedule failed: {0}")]
    Keys(&'static str),
}

/// HKDF-SHA-256 of `ikm` with `salt`, expanded for `info` into `out`.
fn hkdf(salt: &[u8], ikm: &[u8], info: &[&[u8]], out: &mut [u8]) -> Result<(), EceError> {
    Hkdf::<Sha256>::new(Some(salt), ikm)
        .expand_multi_info(info, out)
        .map_err(|_| EceError::Keys("HKDF output length"))
}

/// Encrypts `plaintext` for the browser whose key is `ua_public` and whose auth secret
/// is `auth`, from the sender key `sender` (a fresh one per message) with `salt` (16
/// random bytes per message): the whole request body, header and record.
pub fn encrypt(
    plaintext: &[u8],
    ua_public: &PublicKey,
    auth: &[u8; 16],
    sender: &SecretKey,
    salt: &[u8; 16],
) -> Result<Vec<u8>, EceError> {
    if plaintext.len() > MAX_PLAINTEXT {
        return Err(EceError::TooLarge(plaintext.len()));
    }
    let as_public = sender.public_key().to_sec1_bytes();
    let ua_bytes = ua_public.to_sec1_bytes();
    let shared = sender.diffie_hellman(ua_public);
    // RFC 8291 §3.4: the input keying material, from the ECDH secret and the auth secret.
    let mut ikm = [0u8; 32];
    hkdf(
        auth,
        shared.raw_secret_bytes(),
        &[b"WebPush: info\0", &ua_bytes, &as_public],
        &mut ikm,
    )?;
    // RFC 8188 §2.2 and §2.3: the content key and the nonce.
    let mut cek = [0u8; 16];
    hkdf(salt, &ikm, &[b"Content-Encoding: aes128gcm\0"], &mut cek)?;
    let mut nonce = [0u8; 12];
    hkdf(salt, &ikm, &[b"Content-Encoding: nonce\0"], &mut nonce)?;
    let mut record = Vec::with_capacity(plaintext.len() + 1);
    record.extend_from_slice(plaintext);
    record.push(2); // the last record's delimiter, no padding after it
    let cipher = Aes128Gcm::new_from_slice(&cek).map_err(|_| EceError::Keys("AES key length"))?;
    let sealed = cipher
        .encrypt(&nonce.into(), record.as_slice())
        .map_err(|_| EceError::Keys("AES-GCM"))?;
    // RFC 8188 §2.1: salt, record size, the key id's length, and the key id: the
    // sender's public key, which the browser needs for its side of the ECDH.
    let mut body = Vec::with_capacity(16 + 4 + 1 + as_public.len() + sealed.len());
    body.extend_from_slice(salt);
    body.extend_from_slice(&RECORD_SIZE.to_be_bytes());
    body.push(as_public.len() as u8);
    body.extend_from_slice(&as_public);
    body.extend_from_slice(&sealed);
    Ok(body)
}

#[cfg(test)]
mod tests {
    use base64ct::{Base64UrlUnpadded, Encoding};

    use super::*;

    fn b64(text: &str) -> Vec<u8> {
        Base64UrlUnpadded::decode_vec(text).expect("base64url")
    }

    /// RFC 8291 appendix A: the fixed keys, salt and auth secret give the published body.
    #[test]
    fn the_rfc_8291_example_encrypts_to_its_exact_bytes() {
        let sender = SecretKey::from_slice(&b64("yfWPiYE-n46HLnH0KqZOF1fJJU3MYrct3AELtAQ-oRw"))
            .expect("the RFC's sender key");
        assert_eq!(
            sender.public_key().to_sec1_bytes().as_ref(),
            b64(
                "BP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A8"
            )
        );
        let ua = PublicKey::from_sec1_bytes(&b64(
            "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4",
        ))
        .expect("the RFC's browser key");
        let auth: [u8; 16] = b64("BTBZMqHH6r4Tts7J_aSIgg").try_into().expect("16");
        let salt: [u8; 16] = b64("DGv6ra1nlYgDCS1FRnbzlw").try_into().expect("16");
        let body = encrypt(
            b"When I grow up, I want to be a watermelon",
            &ua,
            &auth,
            &sender,
            &salt,
        )
        .expect("encrypted");
        let want = b64(concat!(
            "DGv6ra1nlYgDCS1FRnbzlwAAEABBBP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27ml",
            "mlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A_yl95bQpu6cVPT",
            "pK4Mqgkf1CXztLVBSt2Ks3oZwbuwXPXLWyouBWLVWGNWQexSgSxsj_Qulcy4a-fN",
        ));
        assert_eq!(hex::encode(body), hex::encode(want));
    }

    #[test]
    fn a_payload_over_one_record_is_refused() {
        let sender = SecretKey::from_slice(&[7u8; 32]).expect("a key");
        let ua = SecretKey::from_slice(&[9u8; 32])
            .expect("a key")
            .public_key();
        let big = vec![b'x'; MAX_PLAINTEXT + 1];
        assert_eq!(
            encrypt(&big, &ua, &[0; 16], &sender, &[0; 16]),
            Err(EceError::TooLarge(MAX_PLAINTEXT + 1))
        );
        let fits = encrypt(&big[1..], &ua, &[0; 16], &sender, &[0; 16]).expect("fits");
        assert_eq!(fits.len(), 16 + 4 + 1 + 65 + MAX_PLAINTEXT + OVERHEAD);
    }
}
