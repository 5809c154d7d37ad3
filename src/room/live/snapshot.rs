//! The whole state of a game for a client that has nothing.

use super::{LiveGame, Play, Stage};
use crate::clock::Millis;
use crate::protocol::{MoveRecord, Prisoners, Seat, Snapshot};
use crate::rules::Color;

impl LiveGame {
    pub fn snapshot(
        &self,
        game_id: &str,
        now: Millis,
        server_time: i64,
        you: Option<Color>,
    ) -> Snapshot {
        let board = self.game.board();
        let rows = board.to_diagram().lines().map(str::to_string).collect();
        let scoring = match &self.stage {
            Stage::Scoring(s) => Some(s),
            Stage::Ended(e) => e.scoring.as_ref(),
            _ => None,
        };
        let (dead, marks_seq, accepted) = match scoring {
            Some(s) => (
                s.dead.iter().collect(),
                s.marks_seq,
                [Color::Black, Color::White]
                    .into_iter()
                    .filter(|c| s.accepted[c.index()])
                    .collect(),
            ),
            None => (Vec::new(), 0, Vec::new()),
        };
        let (pause_requested_by, resume_requested_by, sealed_by) = match &self.stage {
            Stage::Play(Play::Running { pause_requested_by }) => (*pause_requested_by, None, None),
            Stage::Play(Play::Paused {
                resume_requested_by,
            }) => (None, *resume_requested_by, None),
            Stage::Play(Play::Adjourned {
                sealed,
                resume_requested_by,
            }) => (None, *resume_requested_by, Some(sealed.by)),
            _ => (None, None, None),
        };
        let ended = match &self.stage {
            Stage::Ended(e) => Some(e),
            _ => None,
        };
        Snapshot {
            game_id: game_id.to_string(),
            seq: self.seq,
            settings: self.settings.clone(),
            black: self.seat(Color::Black),
            white: self.seat(Color::White),
            phase: self.phase(),
            board: rows,
            handicap_stones: self.handicap_stones.clone(),
            moves: self
                .game
                .moves()
                .iter()
                .map(|&(color, vertex)| MoveRecord { color, vertex })
                .collect(),
            prisoners: Prisoners {
                black: self.game.prisoners(Color::Black),
                white: self.game.prisoners(Color::White),
            },
            to_move: self.game.to_move(),
            clock: self.clock_view(now),
            server_time,
            dead,
            marks_seq,
            accepted,
            disputes: self.disputes,
            paused: matches!(self.stage, Stage::Play(Play::Paused { .. })),
            adjourn_at: self.adjourn_at,
            referee_paused: self.stage == Stage::Play(Play::Halted),
            sealed_by,
            pause_requested_by,
            resume_requested_by,
            result: ended.map(|e| e.result),
            reason: ended.map(|e| e.reason.clone()),
            score: ended.and_then(|e| e.score.clone()),
            chat: self.chat.iter().cloned().collect(),
            nigiri: self.nigiri.clone(),
            you,
            plan: None,
        }
    }

    fn seat(&self, color: Color) -> Seat {
        Seat {
            user: self.player(color).clone(),
            online: self.online[color.index()],
            warnings: self.warnings[color.index()],
        }
    }
}
