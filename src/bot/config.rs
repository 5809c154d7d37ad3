//! What a bot is told to do: the resolved [`BotConfig`] the connection loop runs with,
//! and the TOML file (`tengen bot --config FILE`) it can be read from. Flags override the
//! file; the token is never read from the file (pass `--token` or `TENGEN_BOT_TOKEN`).

use std::path::Path;
use std::time::Duration;

use serde::Deserialize;
use thiserror::Error;

use crate::protocol::{BotOffer, GameSettings};
use crate::rating::Rank;

/// Everything the bot needs to run.
#[derive(Debug, Clone)]
pub struct BotConfig {
    /// The server's WebSocket URL, e.g. `ws://127.0.0.1:7480/ws`.
    pub server: String,
    /// A token for an account with `role: bot` (a player token works without an offer).
    pub token: String,
    /// The engine's command line, run once per game.
    pub engine: String,
    /// Games played at once, each with its own engine process.
    pub max_games: usize,
    /// The standing offer to post; `None` posts none.
    pub offer: Option<BotOffer>,
    /// Whom to challenge, and with what settings.
    pub challenge: Option<ChallengePlan>,
    /// Accept open seeks that the offer admits.
    pub answer_seeks: bool,
    /// Stop after this many games have ended.
    pub games: Option<u32>,
    /// How long an engine may think about one move in an untimed game (timed games use
    /// the clock).
    pub untimed_move_limit: Duration,
    /// A tournament to enter on connecting; its games are then played like any other.
    pub tournament: Option<Entry>,
}

/// A tournament the bot registers for (`--tournament`), with the rank it declares.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    /// The tournament's id.
    pub id: String,
    /// The declared rank; without one the server takes the rank of the bot's rating.
    #[serde(default)]
    pub rank: Option<Rank>,
}

/// A challenge the bot issues, again after each game, so that two bots can be set to
/// play a match from the command line.
#[derive(Debug, Clone, PartialEq)]
pub struct ChallengePlan {
    /// The opponent's user id.
    pub opponent: String,
    pub settings: GameSettings,
}

/// The bot configuration file. Every key is optional.
///
/// ```toml
/// server = "ws://127.0.0.1:7480/ws"
/// engine = "/usr/games/gnugo --mode gtp --chinese-rules --level 10"
/// max_games = 4
/// untimed_move_secs = 300
///
/// [offer]
/// board_sizes = [9, 13, 19]
/// rulesets = ["chinese"]
/// time_systems = ["byoyomi", "fischer", "canadian", "absolute"]
/// min_main_ms = 60000
/// max_main_ms = 3600000
/// max_handicap = 9
/// ```
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BotFile {
    pub server: Option<String>,
    pub engine: Option<String>,
    pub max_games: Option<usize>,
    pub untimed_move_secs: Option<u64>,
    pub games: Option<u32>,
    pub answer_seeks: Option<bool>,
    /// Post no offer at all: the bot declines challenges and only challenges.
    pub no_offer: Option<bool>,
    pub offer: Option<BotOffer>,
    pub challenge: Option<ChallengeFile>,
    pub tournament: Option<Entry>,
}

/// `[challenge]` in the bot file.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChallengeFile {
    pub opponent: String,
    #[serde(default)]
    pub settings: Option<GameSettings>,
}

/// A bot file that could not be used.
#[derive(Debug, Error)]
pub enum BotFileError {
    #[error("The bot file {path} could not be read: {cause}.")]
    Read { path: String, cause: std::io::Error },
    #[error("The bot file {path} is not valid: {message}")]
    Invalid { path: String, message: String },
}

impl BotFile {
    /// Reads and checks a bot file; unknown keys are errors.
    pub fn load(path: &Path) -> Result<BotFile, BotFileError> {
        let text = std::fs::read_to_string(path).map_err(|cause| BotFileError::Read {
            path: path.display().to_string(),
            cause,
        })?;
        BotFile::parse(&text).map_err(|message| BotFileError::Invalid {
            path: path.display().to_string(),
            message,
        })
    }

    pub fn parse(text: &str) -> Result<BotFile, String> {
        toml::from_str(text).map_err(|e| e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rating::Rank;
    use crate::rules::Ruleset;

    #[test]
    fn the_documented_file_reads() {
        let file = BotFile::parse(
            r#"
server = "ws://127.0.0.1:7480/ws"
engine = "/usr/games/gnugo --mode gtp --chinese-rules --level 10"
max_games = 4

[offer]
board_sizes = [9, 13, 19]
rulesets = ["chinese"]
time_systems = ["byoyomi", "fischer"]
min_main_ms = 60000
max_handicap = 9

[challenge]
opponent = "gnugo-2"
settings = { board_size = 9, color = "black", clock = { system = "byoyomi", main_ms = 60000, periods = 3, period_ms = 10000 } }

[tournament]
id = "wmfp1057c2"
rank = "3k"
"#,
        )
        .unwrap();
        let offer = file.offer.unwrap();
        assert_eq!(offer.board_sizes, [9, 13, 19]);
        assert_eq!(offer.rulesets, [Ruleset::Chinese]);
        assert_eq!(offer.max_main_ms, None);
        assert_eq!(offer.max_handicap, 9);
        let challenge = file.challenge.unwrap();
        assert_eq!(challenge.opponent, "gnugo-2");
        assert_eq!(challenge.settings.unwrap().board_size, 9);
        let entry = file.tournament.unwrap();
        assert_eq!(entry.id, "wmfp1057c2");
        assert_eq!(entry.rank, Some(Rank::Kyu(3)));
        assert!(BotFile::parse("sever = 'x'").unwrap_err().contains("sever"));
        let bad_rank = BotFile::parse("[tournament]\nid = 'x'\nrank = '3p'").unwrap_err();
        assert!(bad_rank.contains("rank"), "{bad_rank}");
    }
}
