//! The event's draw (抽签) as commitments, checked the way a game's nigiri is
//! (`client-protocol/nigiri.md`): when the tournament is created the server draws one
//! 32-byte secret per round and publishes only each one's `hex(sha256(secret))`; a round's
//! secret is revealed when the round is published. Every random choice of a round (the
//! order inside a score group, the colours of even games, split-and-random seeding) comes
//! from its pairing seed, the first eight bytes of `sha256(secret ‖ tournament id)` read
//! as a big-endian number; a nigiri at a board draws from the same secret with the board's
//! own seed. Anyone holding a revealed secret checks it against the commitment, derives
//! the seed, and pairs the round again with [`super::pairing::pair`] to the same boards.
//!
//! The server cannot steer a draw after it has committed, and the commitments come
//! before anyone has registered. Pure: the caller draws the secret (`rand::random()`).

use sha2::{Digest, Sha256};

/// Why a revealed draw was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DrawError {
    #[error("the secret is not 64 hexadecimal digits")]
    BadSecret,
    #[error("the secret does not match the commitment published before the event")]
    Mismatch,
}

/// The event's secret, from which its seed follows.
#[derive(Clone, PartialEq, Eq)]
pub struct Draw {
    secret: [u8; 32],
}

impl std::fmt::Debug for Draw {
    /// The secret stays out of logs until it is revealed on purpose.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Draw({})", self.commitment())
    }
}

impl Draw {
    pub fn new(secret: [u8; 32]) -> Draw {
        Draw { secret }
    }

    /// What is published before the event: `hex(sha256(secret))`.
    pub fn commitment(&self) -> String {
        hex::encode(Sha256::digest(self.secret))
    }

    /// The secret's bytes, which a nigiri at the board draws from with its own seed.
    pub fn secret(&self) -> &[u8; 32] {
        &self.secret
    }

    /// What is revealed after it: the secret in hex.
    pub fn secret_hex(&self) -> String {
        hex::encode(self.secret)
    }

    /// The draw a revealed secret gives, if it is the one `commitment` promised.
    pub fn reveal(commitment: &str, secret_hex: &str) -> Result<Draw, DrawError> {
        let bytes = hex::decode(secret_hex.trim()).map_err(|_| DrawError::BadSecret)?;
        let secret: [u8; 32] = bytes.try_into().map_err(|_| DrawError::BadSecret)?;
        let draw = Draw::new(secret);
        if draw.commitment().eq_ignore_ascii_case(commitment.trim()) {
            Ok(draw)
        } else {
            Err(DrawError::Mismatch)
        }
    }

    /// The pairing's seed for the tournament `tournament_id`: the first eight bytes of
    /// `sha256(secret ‖ tournament_id)`, big-endian.
    pub fn seed(&self, tournament_id: &str) -> u64 {
        let mut h = Sha256::new();
        h.update(self.secret);
        h.update(tournament_id.as_bytes());
        let digest = h.finalize();
        let mut first = [0u8; 8];
        first.copy_from_slice(&digest[..8]);
        u64::from_be_bytes(first)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rating::Rank;
    use crate::tournament::field::{Entrant, Record, Status};
    use crate::tournament::pairing::pair;
    use crate::tournament::regulations::{ColourRule, Regulations, Seeding, System};

    /// A known answer anyone can recompute with a shell:
    /// `printf '%064x' 0 | xxd -r -p | sha256sum` gives the commitment, and
    /// `{ printf '%064x' 0 | xxd -r -p; printf t1; } | sha256sum` the seed's bytes.
    #[test]
    fn commitment_and_seed_are_sha256_as_documented() {
        let draw = Draw::new([0; 32]);
        assert_eq!(
            draw.commitment(),
            "66687aadf862bd776c8fc18b8e9f8e20089714856ee233b3902a591d0d5f2925"
        );
        let mut h = Sha256::new();
        h.update([0u8; 32]);
        h.update(b"t1");
        let expected = u64::from_be_bytes(h.finalize()[..8].try_into().unwrap());
        assert_eq!(draw.seed("t1"), expected);
        assert_ne!(draw.seed("t1"), draw.seed("t2"));
    }

    #[test]
    fn only_the_committed_secret_is_accepted() {
        let draw = Draw::new([7; 32]);
        let commitment = draw.commitment();
        assert_eq!(
            Draw::reveal(&commitment, &draw.secret_hex()),
            Ok(draw.clone())
        );
        assert_eq!(
            Draw::reveal(&commitment.to_uppercase(), &draw.secret_hex()),
            Ok(draw)
        );
        assert_eq!(
            Draw::reveal(&commitment, &hex::encode([8u8; 32])),
            Err(DrawError::Mismatch)
        );
        assert_eq!(Draw::reveal(&commitment, "zz"), Err(DrawError::BadSecret));
        assert_eq!(
            Draw::reveal(&commitment, &hex::encode([7u8; 31])),
            Err(DrawError::BadSecret)
        );
    }

    /// Whoever holds the revealed secret pairs round one to the same boards, colours
    /// included; another secret draws the equal players' order and colours otherwise.
    #[test]
    fn a_revealed_draw_pairs_round_one_again() {
        let record = Record {
            regulations: Regulations {
                system: System::McMahon {
                    bar: Rank::Dan(2),
                    floor: Rank::Kyu(20),
                },
                rounds: 5,
                handicap: None,
                colours: ColourRule::Draw,
                seeding: Seeding::SplitAndRandom,
                tie_breaks: vec![],
                bye: 2,
                missed_round: 0,
                separate_clubs: false,
                separate_countries: false,
            },
            // Sixteen equal players: the draw decides everything.
            field: (0..16)
                .map(|i| Entrant {
                    id: format!("p{i}"),
                    rank: Rank::Kyu(5),
                    club: String::new(),
                    country: String::new(),
                    first_round: 1,
                    status: Status::Playing,
                })
                .collect(),
            rounds: vec![],
            adjustments: Vec::new(),
        };
        let seats: Vec<usize> = (0..16).collect();
        let server = Draw::new([42; 32]);
        let published = server.commitment();
        let paired = pair(&record, &seats, &[], server.seed("spring-open")).unwrap();
        let checker = Draw::reveal(&published, &server.secret_hex()).unwrap();
        let again = pair(&record, &seats, &[], checker.seed("spring-open")).unwrap();
        assert_eq!(paired, again);
        let other = pair(
            &record,
            &seats,
            &[],
            Draw::new([43; 32]).seed("spring-open"),
        )
        .unwrap();
        assert_ne!(paired.boards, other.boards);
    }
}
