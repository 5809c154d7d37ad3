//! The real 19x19 games the benchmarks replay: GNU Go's self-play games in tests/data/gnugo.

use std::path::Path;

use tengen::rules::sgf::GameRecord;
use tengen::rules::{Color, Move, Vertex};

/// A game ready to replay: the starting position and the moves.
pub struct Replay {
    pub setup: Vec<(Vertex, Color)>,
    pub first: Color,
    pub moves: Vec<(Color, Move)>,
}

pub fn gnugo_games() -> Vec<Replay> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/gnugo");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("tests/data/gnugo exists")
        .map(|e| e.expect("readable directory").path())
        .filter(|p| p.extension().is_some_and(|e| e == "sgf"))
        .collect();
    files.sort();
    files
        .iter()
        .map(|f| {
            GameRecord::from_sgf_bytes(&std::fs::read(f).expect("readable game"))
                .expect("valid SGF")
        })
        .filter(|r| r.size == 19)
        .map(|r| Replay {
            setup: r.setup.clone(),
            first: r.first_to_move(),
            moves: r.moves.iter().map(|m| (m.color, m.mv)).collect(),
        })
        .collect()
}
