//! The fuzz targets' checks (fuzz/src/) on the stable toolchain: every input a fuzzer
//! found a bug with stays here as a plain test, and the committed seed corpus is replayed
//! too, so the checks themselves cannot rot between fuzz runs. The fuzz crate and its
//! command are described in fuzz/README.md.

#[path = "../fuzz/src/bytes.rs"]
mod bytes;
#[path = "../fuzz/src/clock.rs"]
mod clock;
#[path = "../fuzz/src/decode.rs"]
mod decode;
#[path = "../fuzz/src/gtp.rs"]
mod gtp;
#[path = "../fuzz/src/rules.rs"]
mod rules;
#[path = "../fuzz/src/sgf.rs"]
mod sgf;

use std::path::Path;

use tengen::rules::HalfPoints;
use tengen::rules::sgf::GameRecord;

/// Runs `check` on every seed of fuzz/corpus/`target`/ and says how many there were.
/// What a fuzz run adds there (named by the SHA-1 of its content) is left out.
fn replay_seeds(target: &str, check: fn(&[u8])) -> usize {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/corpus")
        .join(target);
    let mut seeds = 0;
    for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy();
        if name.len() == 40 && name.bytes().all(|b| b.is_ascii_hexdigit()) {
            continue;
        }
        check(&std::fs::read(&path).unwrap());
        seeds += 1;
    }
    seeds
}

#[test]
fn the_decode_seeds_pass() {
    assert!(replay_seeds("decode", decode::check) >= 10);
}

#[test]
fn the_sgf_seeds_pass() {
    assert!(replay_seeds("sgf", sgf::check) >= 10);
}

#[test]
fn the_rules_seeds_pass() {
    assert!(replay_seeds("rules", rules::check) >= 10);
}

#[test]
fn the_gtp_seeds_pass() {
    assert!(replay_seeds("gtp", gtp::check) >= 10);
}

#[test]
fn the_clock_seeds_pass() {
    assert!(replay_seeds("clock", clock::check) >= 5);
}

/// Found by reading rather than by a fuzzer, but the sgf check now guards it: a point
/// listed again and again (each `[aa:yy]` is 625 points) grew the setup without bound.
#[test]
fn sgf_setup_repeating_a_rectangle_stays_one_stone_per_point() {
    let record = format!(
        "(;SZ[25]AB{}AE{})",
        "[aa:yy]".repeat(2_000),
        "[aa:yy]".repeat(2_000)
    );
    sgf::check(record.as_bytes());
    let record = format!("(;SZ[25]AB{}AW[aa])", "[aa:yy]".repeat(2_000));
    sgf::check(record.as_bytes());
}

/// The sgf fuzzer's finds (minimized by hand from its artifacts): game information in a
/// node after the root, a `TM` that is not a number, a `PL` after the first move, and a
/// move's `BL`/`OB` in a node of its own were kept in the record but dropped or read
/// otherwise once written, so a record written and read again was another record.
#[test]
fn sgf_game_information_survives_a_round_trip() {
    for record in [
        "(;TM[long-life])",
        "(;;CA[UTF8]SZ[3]KM[7.5])",
        "(;;DT[x])",
        "(;;FF[])",
        "(;;B[aa];PL[W])",
        "(;;B[];C[x]OB[9][bb])",
    ] {
        sgf::check(record.as_bytes());
    }
    let record = GameRecord::from_sgf("(;;KM[7.5]PB[x];B[aa]PL[W])").unwrap();
    assert_eq!(record.komi, Some(HalfPoints(15)));
    assert_eq!(record.black_player.as_deref(), Some("x"));
    assert_eq!(
        record.to_move, None,
        "a PL beside a move is no starting side"
    );
    let record = GameRecord::from_sgf("(;;B[aa];BL[30]OB[2])").unwrap();
    assert_eq!(
        record.moves[0].time_left,
        Some(30.0),
        "times after a move are its"
    );
    assert_eq!(record.moves[0].periods_left, Some(2));
}

/// The clock fuzzer's finds, which were the check's own mistakes at the far end of
/// `u64`: a deadline that saturates at `u64::MAX` reached by a saturated `now`, and the
/// saturated sums of settings the server refuses. The check now keeps the timeline
/// below 2^62 ms and asks exact accounting only of valid settings; these must pass.
#[test]
fn clock_check_is_exact_only_where_nothing_saturates() {
    clock::check(&[
        0x1b, 0xfd, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00, 0x02, 0xc0, 0x27, 0xba, 0x00, 0x02,
        0x6f, 0x03, 0x00, 0x00, 0x02, 0xb8, 0x24, 0x02, 0xf4, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x27, 0x85,
    ]);
    clock::check(&[
        0xff, 0xff, 0xff, 0xff, 0x00, 0x00, 0x00, 0xff, 0xfb, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
        0xff, 0x00, 0x00, 0x00, 0x01, 0x00, 0x01, 0x01, 0x0c, 0x02, 0x00, 0x00, 0x00, 0x02, 0xc0,
        0xd4, 0x01, 0x00, 0x00, 0x02, 0xe8, 0x03, 0x01, 0x00, 0x00, 0x81, 0x01, 0xc8, 0xaf, 0x00,
        0x2f,
    ]);
}
