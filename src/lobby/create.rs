//! Turning an accepted seek or challenge into a game: colours (fixed or by nigiri),
//! handicap stones, the first event, and its record stored before anyone hears of it.
//! The game starter ([`crate::starter`]) runs these steps with the slots, the room and
//! the announcements around them.

use super::{Open, nigiri};

use crate::fanout::encode;
use crate::ids::new_id;
use crate::protocol::{
    ColorChoice, ErrorCode, EventFrame, GameEvent, GameSettings, HandicapPlacement, NigiriProof,
    Refusal, UserInfo,
};
use crate::room::{LiveGame, NewGame, RoomContext, Timeline, deadline, event_record, unavailable};
use crate::rules::{self, Color};
use crate::store::{Append, GameRecord, GameStatus};

/// The longest nigiri seed kept from the accepter.
const MAX_SEED_CHARS: usize = 128;

/// Who plays which colour: fixed by the challenger, or drawn by nigiri from the
/// challenger's committed secret and the accepter's seed.
fn colors(
    open: &Open,
    accepter: &UserInfo,
    seed: &str,
) -> (UserInfo, UserInfo, Option<NigiriProof>) {
    let c = &open.challenge;
    let (challenger, proof) = match (c.settings.color, open.secret) {
        (ColorChoice::Black, _) => (Color::Black, None),
        (ColorChoice::White, _) => (Color::White, None),
        (ColorChoice::Nigiri, secret) => {
            let secret = secret.unwrap_or_default();
            let seed: String = seed.chars().take(MAX_SEED_CHARS).collect();
            let color = nigiri::draw(&secret, &seed);
            let proof = NigiriProof {
                commitment: c.nigiri_commitment.clone().unwrap_or_default(),
                secret: hex::encode(secret),
                seed,
                challenger: color,
            };
            (color, Some(proof))
        }
    };
    match challenger {
        Color::Black => (c.from.clone(), accepter.clone(), proof),
        Color::White => (accepter.clone(), c.from.clone(), proof),
    }
}

/// Who plays a new game, with what: the game's id, Black and White, its settings, and
/// the proof of the nigiri that chose the colours, if one did.
pub struct Seating {
    pub id: String,
    pub players: [UserInfo; 2],
    pub settings: GameSettings,
    pub nigiri: Option<NigiriProof>,
}

impl Seating {
    /// The game `open` describes, accepted by `accepter`, under a new id.
    pub fn accepted(open: &Open, accepter: &UserInfo, seed: &str) -> Seating {
        let (black, white, nigiri) = colors(open, accepter, seed);
        Seating {
            id: new_id(),
            players: [black, white],
            settings: open.challenge.settings.clone(),
            nigiri,
        }
    }
}

/// Stores the game `seating` describes: its record and first event, before anyone hears
/// of it; checks first that its settings can start a game.
pub async fn store(ctx: &RoomContext, seating: Seating) -> Result<NewGame, Refusal> {
    let (writer, lag) = (&ctx.writer, ctx.lag);
    let Seating {
        id,
        players: [black, white],
        settings: s,
        nigiri,
    } = seating;
    let handicap_stones = if s.handicap >= 2 && s.handicap_placement == HandicapPlacement::Fixed {
        rules::fixed_handicap(s.board_size, s.handicap).unwrap_or_default()
    } else {
        Vec::new()
    };
    let timeline = Timeline::of(&s);
    let at = timeline.moment(0);
    let now = at.wall_ms;
    let first = GameEvent::GameCreated {
        settings: Box::new(s),
        black,
        white,
        handicap_stones,
        nigiri,
        created_at: now,
    };
    let mut live = LiveGame::create(&first, at, lag).map_err(|e| {
        Refusal::new(
            ErrorCode::BadRequest,
            format!("these settings cannot start a game: {}", e.reason),
        )
    })?;
    let frame = encode(&EventFrame {
        game_id: id.clone(),
        seq: 1,
        event: first,
    });
    let record = GameRecord {
        id: id.clone(),
        created_at_ms: now,
        settings: serde_json::to_string(&live.settings).unwrap_or_default(),
        black: live.black.id.clone(),
        white: live.white.id.clone(),
        black_name: live.black.name.clone(),
        white_name: live.white.name.clone(),
        status: GameStatus::Live,
        result: None,
        ended_at_ms: None,
        move_count: 0,
    };
    let mut batch = vec![
        Append::Create(record),
        Append::Event(event_record(&id, 1, "game_created", &frame, now)),
    ];
    // The deadline index wakes the game for the warning before its first deadline too.
    live.warn_before_deadline(ctx.deadline_warn_ms);
    batch.extend(deadline(&id, &live));
    if live.settings.rated {
        batch.push(Append::Rated {
            game_id: id.clone(),
        });
    }
    writer.commit(batch).await.map_err(|e| unavailable(&e))?;
    Ok(NewGame {
        id,
        live,
        first: frame,
        timeline,
    })
}
