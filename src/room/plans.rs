//! The players' plans of conditional moves in a room (client-protocol/correspondence.md#plans):
//! kept beside the live game, never in its events, so nobody but their player ever sees
//! one; stored with the moves they follow, and read back when the room is rebuilt.

use super::live::LiveGame;
use crate::correspondence::plan::{Answer, Plan, PlanError};
use crate::protocol::{ErrorCode, Phase, Refusal, StoredPlan};
use crate::rules::Color;
use crate::store::Append;

/// Each player's plan, by [`Color::index`].
#[derive(Debug, Default)]
pub struct Plans([Option<Plan>; 2]);

impl Plans {
    /// The plans as stored, `(colour, JSON)`; one that does not read is left out.
    pub fn from_rows(game_id: &str, rows: Vec<(String, String)>) -> Plans {
        let mut plans = Plans::default();
        for (color, text) in rows {
            let color = match color.as_str() {
                "black" => Color::Black,
                "white" => Color::White,
                _ => continue,
            };
            match serde_json::from_str::<Plan>(&text) {
                Ok(plan) => plans.0[color.index()] = Some(plan),
                Err(e) => {
                    tracing::error!(game = %game_id, %color, error = %e, "a stored plan does not read; it is left out")
                }
            }
        }
        plans
    }

    /// `color`'s plan as their own snapshot shows it.
    pub fn stored(&self, color: Color) -> Option<StoredPlan> {
        self.0[color.index()].as_ref().map(|p| StoredPlan {
            move_number: p.move_number,
            replies: p.replies.clone(),
        })
    }

    pub fn set(&mut self, color: Color, plan: Option<Plan>) {
        self.0[color.index()] = plan;
    }

    /// The plan that has something to do in `live` now, and what: a reply to the
    /// opponent's last move, or to be dropped (the opponent played outside it, or play
    /// is over). None while every plan waits for its move.
    pub fn due(&self, live: &LiveGame) -> Option<(Color, Answer)> {
        let moves = live.rules().moves();
        [Color::Black, Color::White].into_iter().find_map(|color| {
            let plan = self.0[color.index()].as_ref()?;
            let played = moves.len() as u32;
            if live.phase() != Phase::Play {
                return Some((color, Answer::Discard));
            }
            if plan.move_number > played {
                return None;
            }
            let last = moves.last().filter(|(by, _)| *by == color.opponent());
            let answer = match (last, live.to_move() == color) {
                (Some((_, mv)), true) => plan.answer(played, *mv),
                _ => Answer::Discard,
            };
            Some((color, answer))
        })
    }
}

/// The batch item that keeps (or drops) `color`'s plan in game `game_id`.
pub fn stored(game_id: &str, color: Color, plan: Option<&Plan>) -> Append {
    Append::Plan {
        game_id: game_id.to_string(),
        color: color.to_string(),
        plan: plan.and_then(|p| serde_json::to_string(p).ok()),
    }
}

impl From<PlanError> for Refusal {
    fn from(e: PlanError) -> Refusal {
        match &e {
            PlanError::TooDeep { .. } | PlanError::TooLarge { .. } => {
                Refusal::new(ErrorCode::TooLarge, e.to_string())
            }
            PlanError::Twice { .. } => Refusal::new(ErrorCode::BadRequest, e.to_string()),
            PlanError::Illegal { illegal, .. } => Refusal {
                message: e.to_string(),
                ..Refusal::illegal(*illegal)
            },
        }
    }
}
