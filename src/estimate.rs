//! A score estimate for a game in play (`GET /api/games/{id}/estimate`): the rules
//! engine's count of the position as it stands with every stone alive (no dead stones
//! taken off), so only a first guess; a game's result is still settled by marking dead
//! stones after two passes.

use serde::{Deserialize, Serialize};

use crate::archive::GameView;
use crate::rules::{Color, DeadStones, count};

/// The estimate as the client receives it. `Deserialize` too, for the documentation test.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Estimate {
    pub game_id: String,
    /// Moves (passes included) in the counted position.
    pub move_number: usize,
    pub black: f64,
    pub white: f64,
    pub komi: f64,
    /// As an SGF result: `B+3.5`, `W+0.5`, `0`.
    pub result: String,
    /// Always true: this is not a game result.
    pub estimate: bool,
}

/// Replays the record and counts the position with no stones dead. `None` when the
/// record does not replay (a log the rules engine refuses).
pub fn estimate(v: &GameView) -> Option<Estimate> {
    let s = &v.settings;
    let mut game = s.starting_game(&v.handicap_stones).ok()?;
    for m in &v.moves {
        game.play(m.color, m.vertex).ok()?;
    }
    let prisoners = [game.prisoners(Color::Black), game.prisoners(Color::White)];
    let rules = s.score_rules();
    let score = count(game.board(), &DeadStones::new(), &rules, prisoners);
    Some(Estimate {
        game_id: v.game_id.clone(),
        move_number: v.moves.len(),
        black: score.black.points(),
        white: score.white.points(),
        komi: rules.komi.points(),
        result: score.result.to_string(),
        estimate: true,
    })
}
