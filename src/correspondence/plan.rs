//! Plans of conditional moves (client-protocol/correspondence.md#plans): a player's
//! private tree of replies, "if they play X, I play Y; then if Z, ...". Pure: checked
//! against a position, answered move by move; the room stores and plays them.

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::protocol::Branch;
use crate::rules::{Color, Game, IllegalMove, Move, Vertex};

/// The most levels (an opponent's move and its reply) a plan may have.
pub const MAX_DEPTH: usize = 30;
/// The largest plan, as compact JSON.
pub const MAX_BYTES: usize = 16 * 1024;

/// A stored plan: the branches answering the opponent's move number `move_number`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Plan {
    pub move_number: u32,
    pub replies: Vec<Branch>,
}

/// What a plan does once the opponent has played.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// Play `play` now; `next` is the plan from then on (None: the plan is spent).
    Reply { play: Vertex, next: Option<Plan> },
    /// The opponent's move is not in the plan: it is dropped.
    Discard,
}

/// Why a plan was refused.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum PlanError {
    #[error("the plan is {depth} levels deep; at most {MAX_DEPTH} are kept")]
    TooDeep { depth: usize },
    #[error("the plan takes {bytes} bytes; at most {MAX_BYTES} are kept")]
    TooLarge { bytes: usize },
    #[error("the plan answers {vertex} twice at move {move_number}")]
    Twice { move_number: u32, vertex: Vertex },
    #[error("in the plan at move {move_number}: {illegal}")]
    Illegal {
        move_number: u32,
        illegal: IllegalMove,
    },
}

impl Plan {
    /// Checks the plan against `game`, where the opponent of `planner` is to make move
    /// `self.move_number`: its size, its depth, and every move in it under the rules,
    /// each from the position its branch leads to.
    pub fn check(&self, game: &Game, planner: Color) -> Result<(), PlanError> {
        let bytes = serde_json::to_string(self).map_or(usize::MAX, |s| s.len());
        if bytes > MAX_BYTES {
            return Err(PlanError::TooLarge { bytes });
        }
        let depth = depth(&self.replies);
        if depth > MAX_DEPTH {
            return Err(PlanError::TooDeep { depth });
        }
        check_level(&self.replies, game, planner, self.move_number)
    }

    /// What the plan does now that the opponent has played `last` as its move
    /// `move_number`. A plan for another move number is spent or stale: dropped.
    pub fn answer(&self, move_number: u32, last: Move) -> Answer {
        let found = match last {
            Move::Play(v) if move_number == self.move_number => {
                self.replies.iter().find(|b| b.when == v)
            }
            _ => None,
        };
        match found {
            None => Answer::Discard,
            Some(branch) => Answer::Reply {
                play: branch.play,
                next: (!branch.then.is_empty()).then(|| Plan {
                    move_number: move_number + 2,
                    replies: branch.then.clone(),
                }),
            },
        }
    }
}

fn depth(level: &[Branch]) -> usize {
    level.iter().map(|b| 1 + depth(&b.then)).max().unwrap_or(0)
}

fn check_level(
    level: &[Branch],
    game: &Game,
    planner: Color,
    move_number: u32,
) -> Result<(), PlanError> {
    for (i, branch) in level.iter().enumerate() {
        if level[..i].iter().any(|b| b.when == branch.when) {
            return Err(PlanError::Twice {
                move_number,
                vertex: branch.when,
            });
        }
        let mut next = game.clone();
        let illegal = |move_number| {
            move |illegal| PlanError::Illegal {
                move_number,
                illegal,
            }
        };
        next.play(planner.opponent(), Move::Play(branch.when))
            .map_err(illegal(move_number))?;
        next.play(planner, Move::Play(branch.play))
            .map_err(illegal(move_number + 1))?;
        check_level(&branch.then, &next, planner, move_number + 2)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::KoRule;

    fn v(s: &str) -> Vertex {
        match Move::parse(s, 9) {
            Ok(Move::Play(v)) => v,
            other => panic!("{s}: {other:?}"),
        }
    }

    fn branch(when: &str, play: &str, then: Vec<Branch>) -> Branch {
        Branch {
            when: v(when),
            play: v(play),
            then,
        }
    }

    /// Black has played E5; White to move 2, and Black plans.
    fn game() -> Game {
        let mut g = Game::new(9, KoRule::Situational).expect("a board");
        g.play(Color::Black, Move::Play(v("E5"))).expect("legal");
        g
    }

    #[test]
    fn a_legal_plan_passes_and_answers_level_by_level() {
        let plan = Plan {
            move_number: 2,
            replies: vec![
                branch("C3", "G7", vec![branch("G3", "C7", vec![])]),
                branch("D4", "F6", vec![]),
            ],
        };
        plan.check(&game(), Color::Black).expect("legal");
        let Answer::Reply { play, next } = plan.answer(2, Move::Play(v("C3"))) else {
            panic!("C3 is in the plan");
        };
        assert_eq!(play, v("G7"));
        let next = next.expect("a next level");
        assert_eq!(next.move_number, 4);
        assert_eq!(
            next.answer(4, Move::Play(v("G3"))),
            Answer::Reply {
                play: v("C7"),
                next: None
            }
        );
        assert_eq!(next.answer(4, Move::Play(v("A1"))), Answer::Discard);
        assert_eq!(plan.answer(2, Move::Pass), Answer::Discard);
        assert_eq!(plan.answer(4, Move::Play(v("C3"))), Answer::Discard);
    }

    #[test]
    fn an_illegal_deep_doubled_or_large_plan_is_refused() {
        let occupied = Plan {
            move_number: 2,
            replies: vec![branch("C3", "G7", vec![branch("G7", "C7", vec![])])],
        };
        let err = occupied.check(&game(), Color::Black).expect_err("occupied");
        assert!(matches!(
            err,
            PlanError::Illegal {
                move_number: 4,
                illegal: IllegalMove::Occupied(_)
            }
        ));
        assert_eq!(
            err.to_string(),
            "in the plan at move 4: G7 is already occupied"
        );
        let twice = Plan {
            move_number: 2,
            replies: vec![branch("C3", "G7", vec![]), branch("C3", "D4", vec![])],
        };
        assert_eq!(
            twice.check(&game(), Color::Black),
            Err(PlanError::Twice {
                move_number: 2,
                vertex: v("C3")
            })
        );
        let mut deep = Vec::new();
        for _ in 0..=MAX_DEPTH {
            deep = vec![branch("A1", "J9", deep)];
        }
        let deep = Plan {
            move_number: 2,
            replies: deep,
        };
        assert_eq!(
            deep.check(&game(), Color::Black),
            Err(PlanError::TooDeep {
                depth: MAX_DEPTH + 1
            })
        );
        let wide: Vec<Branch> = (0..800).map(|_| branch("A1", "J9", vec![])).collect();
        let wide = Plan {
            move_number: 2,
            replies: wide,
        };
        let err = wide.check(&game(), Color::Black).unwrap_err();
        assert!(matches!(err, PlanError::TooLarge { .. }), "{err}");
    }
}
