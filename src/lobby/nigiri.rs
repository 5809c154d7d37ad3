//! Nigiri (猜先) as a commit-reveal draw. The server picks a secret when the seek is made
//! and publishes only its sha256 (the commitment). The accepting player adds a seed of
//! their own. The challenger gets Black when the first byte of sha256(secret ‖ seed) is
//! even. The server cannot steer the draw (it committed before it saw the seed) and the
//! accepter cannot (they never saw the secret); both check it once the secret is revealed.

use sha2::{Digest, Sha256};

use crate::rules::Color;

/// A fresh secret and its commitment (hex sha256).
pub fn commit() -> ([u8; 32], String) {
    let secret: [u8; 32] = rand::random();
    let commitment = hex::encode(Sha256::digest(secret));
    (secret, commitment)
}

/// The challenger's colour for this secret and the accepter's seed.
pub fn draw(secret: &[u8], seed: &str) -> Color {
    let mut h = Sha256::new();
    h.update(secret);
    h.update(seed.as_bytes());
    if h.finalize()[0] % 2 == 0 {
        Color::Black
    } else {
        Color::White
    }
}

/// Checks a revealed draw: the secret matches the commitment and gives `challenger`.
pub fn verify(commitment: &str, secret_hex: &str, seed: &str, challenger: Color) -> bool {
    let Ok(secret) = hex::decode(secret_hex) else {
        return false;
    };
    hex::encode(Sha256::digest(&secret)) == commitment && draw(&secret, seed) == challenger
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_revealed_draw_verifies_and_a_changed_one_does_not() {
        let (secret, commitment) = commit();
        let color = draw(&secret, "my seed");
        assert!(verify(&commitment, &hex::encode(secret), "my seed", color));
        assert!(!verify(
            &commitment,
            &hex::encode(secret),
            "my seed",
            color.opponent()
        ));
        assert!(!verify(
            &commitment,
            &hex::encode([0u8; 32]),
            "my seed",
            color
        ));
    }

    #[test]
    fn both_colours_come_up() {
        let (secret, _) = commit();
        let blacks = (0..200)
            .filter(|i| draw(&secret, &i.to_string()) == Color::Black)
            .count();
        assert!((40..=160).contains(&blacks), "{blacks} blacks in 200 draws");
    }
}
