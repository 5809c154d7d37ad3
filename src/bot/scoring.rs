//! What a bot does in the dead-stone phase, as a pure function of the position, the
//! stones its engine calls dead and the marks on the server (docs/RULES.md §5).
//!
//! The bot only ever marks stones dead (never unmarks), accepts exactly when the marks
//! equal its engine's view, and rejects as soon as they cannot become equal without
//! undoing someone's marks: then play resumes and settles the question.

use std::collections::BTreeSet;

use crate::rules::{Board, Vertex};

/// The bot's next step in the dead-stone phase.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Mark these chains dead (one vertex per chain).
    Mark(Vec<Vertex>),
    /// The marks are the engine's: accept them.
    Accept,
    /// The marks disagree with the engine: reject, so play resumes.
    Reject,
}

/// Decides from `mine` (the stones the engine calls dead), `marks` (the server's marks
/// now) and `ever_marked` (every stone marked at some time in this phase). A stone the
/// engine thinks alive in the marks, or a dead one someone has unmarked, is a dispute.
/// Chains in `requested` were already asked for and are not asked for again.
pub fn verdict(
    board: &Board,
    mine: &BTreeSet<Vertex>,
    marks: &BTreeSet<Vertex>,
    ever_marked: &BTreeSet<Vertex>,
    requested: &BTreeSet<Vertex>,
) -> Verdict {
    if !marks.is_subset(mine) {
        return Verdict::Reject;
    }
    let missing: BTreeSet<Vertex> = mine.difference(marks).copied().collect();
    if missing.is_empty() {
        return Verdict::Accept;
    }
    if !missing.is_disjoint(ever_marked) {
        return Verdict::Reject;
    }
    let mut covered = requested.clone();
    let mut chains = Vec::new();
    for &v in &missing {
        if covered.contains(&v) {
            continue;
        }
        let chain = board.chain(v);
        if chain.is_empty() {
            // The engine named an empty point: nothing to mark there.
            continue;
        }
        covered.extend(chain);
        chains.push(v);
    }
    Verdict::Mark(chains)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn board() -> Board {
        // Three black chains: B6-C6, A2-B2-B1 and F2.
        Board::from_diagram(
            "\
. X X O . .
. . . O . .
O O O O . .
. . . . O O
X X . . O X
. X . . O .",
        )
        .unwrap()
    }

    fn set(vs: &[&str]) -> BTreeSet<Vertex> {
        vs.iter().map(|v| Vertex::parse(v, 6).unwrap()).collect()
    }

    #[test]
    fn the_bot_marks_each_dead_chain_once() {
        let b = board();
        let mine = set(&["B6", "C6", "F2", "A2", "B2", "B1"]);
        let v = verdict(&b, &mine, &set(&[]), &set(&[]), &set(&[]));
        assert_eq!(
            v,
            Verdict::Mark(set(&["A2", "B6", "F2"]).into_iter().collect())
        );
        // Chains already asked for are not asked for again.
        let v = verdict(&b, &mine, &set(&[]), &set(&[]), &set(&["A2", "B2", "B1"]));
        assert_eq!(v, Verdict::Mark(set(&["B6", "F2"]).into_iter().collect()));
    }

    #[test]
    fn equal_marks_are_accepted() {
        let b = board();
        let mine = set(&["B6", "C6"]);
        assert_eq!(verdict(&b, &mine, &mine, &mine, &mine), Verdict::Accept);
        assert_eq!(
            verdict(&b, &set(&[]), &set(&[]), &set(&[]), &set(&[])),
            Verdict::Accept
        );
    }

    #[test]
    fn a_chain_the_engine_thinks_alive_in_the_marks_is_a_dispute() {
        let b = board();
        let mine = set(&["B6", "C6"]);
        let marks = set(&["B6", "C6", "F2"]);
        assert_eq!(verdict(&b, &mine, &marks, &marks, &mine), Verdict::Reject);
    }

    #[test]
    fn unmarking_a_dead_chain_is_a_dispute() {
        let b = board();
        let mine = set(&["B6", "C6"]);
        // Marked once, then someone took it back.
        assert_eq!(verdict(&b, &mine, &set(&[]), &mine, &mine), Verdict::Reject);
    }
}
