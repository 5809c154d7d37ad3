//! SGF reading on any bytes: no panic, nothing that grows faster than the input (a point
//! is set up at most once, however often a record lists it), every record read is
//! written back to an equal record, and replaying it into a game never panics.

use tengen::rules::sgf::{self, GameRecord};
use tengen::rules::{Game, KoRule, Move};

pub fn check(data: &[u8]) {
    let Ok(games) = sgf::parse_bytes(data) else {
        return;
    };
    let nodes: usize = games.iter().map(Vec::len).sum();
    let semicolons = data.iter().filter(|&&b| b == b';').count();
    assert!(nodes <= semicolons, "{nodes} nodes from {semicolons} `;`");
    let Ok(record) = GameRecord::from_sgf_bytes(data) else {
        return;
    };
    let area = usize::from(record.size) * usize::from(record.size);
    assert!(
        record.setup.len() <= area,
        "{} setup stones on {area} points",
        record.setup.len()
    );
    let mut points: Vec<_> = record.setup.iter().map(|&(v, _)| v).collect();
    points.sort_unstable();
    points.dedup();
    assert_eq!(points.len(), record.setup.len(), "a point set up twice");

    let written = record.to_sgf();
    let again = GameRecord::from_sgf(&written)
        .unwrap_or_else(|e| panic!("the writer wrote {written:?}, which reads as {e}"));
    assert_eq!(again, record, "{written:?} reads back differently");

    let Ok(mut game) = Game::with_setup(
        record.size,
        KoRule::Situational,
        &record.setup,
        record.first_to_move(),
    ) else {
        panic!("a record of size {} has no game", record.size);
    };
    for m in &record.moves {
        if game.play_ignoring_repetition(m.color, m.mv).is_err() {
            break;
        }
        if let Move::Play(v) = m.mv {
            assert!(game.board().contains(v));
        }
    }
}
