//! What a push request tells the push service about its message (RFC 8030 §5): how soon
//! to wake the browser for it (`Urgency`), and which earlier message it replaces
//! (`Topic`). Neither says anything the service could read a game out of.

use base64ct::{Base64UrlUnpadded, Encoding};
use sha2::{Digest, Sha256};

use crate::protocol::{Notice, NoticeKind};

/// How soon a push service should wake a browser for `kind` (RFC 8030 §5.3).
pub fn urgency(kind: NoticeKind) -> &'static str {
    match kind {
        NoticeKind::Deadline | NoticeKind::VacationEnding => "high",
        NoticeKind::YourMove | NoticeKind::ChallengeReceived | NoticeKind::RoundPaired => "normal",
        NoticeKind::GameEnded => "low",
    }
}

/// The topic of `notice` (RFC 8030 §5.4): a push service keeps only the newest message
/// of a topic not yet delivered, so a browser that was offline gets one "your move" per
/// game, not one per move. One topic per kind and what the notice is about (its game;
/// else its tournament's round; else its challenge; a vacation's end is the account's
/// alone, and a subscription is one account's). Hashed, so the service learns no game
/// id, and cut to 24 bytes: 32 characters of base64url, the most a topic may have.
pub fn topic(notice: &Notice) -> String {
    let p = &notice.payload;
    let about = match (&p.game_id, &p.tournament_id, &p.challenge_id) {
        (Some(game), _, _) => format!("game {game}"),
        (None, Some(tournament), _) => format!("round {tournament} {}", p.round.unwrap_or(0)),
        (None, None, Some(challenge)) => format!("challenge {challenge}"),
        (None, None, None) => String::new(),
    };
    let digest = Sha256::new()
        .chain_update(notice.kind.as_str())
        .chain_update([0u8])
        .chain_update(about)
        .finalize();
    Base64UrlUnpadded::encode_string(&digest[..24])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::NoticePayload;

    fn notice(kind: NoticeKind, payload: NoticePayload) -> Notice {
        Notice {
            notice_id: 1,
            kind,
            payload,
            at: 0,
            read: false,
        }
    }

    fn in_game(kind: NoticeKind, game: &str) -> Notice {
        let payload = NoticePayload {
            game_id: Some(game.into()),
            ..NoticePayload::default()
        };
        notice(kind, payload)
    }

    #[test]
    fn a_topic_is_32_url_safe_characters_for_every_kind() {
        for kind in NoticeKind::ALL {
            for n in [
                in_game(kind, "k3c9x2m7pq"),
                notice(kind, NoticePayload::default()),
            ] {
                let t = topic(&n);
                assert_eq!(t.len(), 32, "{t}");
                let url_safe = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_';
                assert!(t.chars().all(url_safe), "{t}");
            }
        }
    }

    #[test]
    fn a_notice_replaces_only_one_of_its_kind_about_the_same_thing() {
        let moved = topic(&in_game(NoticeKind::YourMove, "g1"));
        let mut later = in_game(NoticeKind::YourMove, "g1");
        later.notice_id = 2;
        later.at = 60_000;
        assert_eq!(topic(&later), moved, "the same game's next move");
        assert_ne!(topic(&in_game(NoticeKind::YourMove, "g2")), moved);
        assert_ne!(topic(&in_game(NoticeKind::Deadline, "g1")), moved);
        let round = |tournament: &str, round: u32| {
            let payload = NoticePayload {
                tournament_id: Some(tournament.into()),
                round: Some(round),
                ..NoticePayload::default()
            };
            topic(&notice(NoticeKind::RoundPaired, payload))
        };
        assert_eq!(round("t1", 2), round("t1", 2));
        assert_ne!(round("t1", 2), round("t1", 3));
        assert_ne!(round("t1", 2), round("t2", 2));
        let challenge = |id: &str| {
            let payload = NoticePayload {
                challenge_id: Some(id.into()),
                ..NoticePayload::default()
            };
            topic(&notice(NoticeKind::ChallengeReceived, payload))
        };
        assert_ne!(challenge("c1"), challenge("c2"));
    }
}
