//! `tengen bot`: play games on a server with a GTP engine (see `tengen::bot`). Flags
//! override the bot file given with `--config`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, bail};
use serde_json::{Map, Value, json};
use tengen::bot::{self, BotConfig, BotFile, ChallengePlan, Entry};
use tengen::protocol::GameSettings;
use tengen::rating::Rank;
use tracing_subscriber::EnvFilter;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The server's WebSocket URL, e.g. ws://127.0.0.1:7480/ws
    #[arg(long, value_name = "URL")]
    pub server: Option<String>,
    /// A bot account's token: a personal API token with the `bot` scope (`POST
    /// /api/tokens`), or an operator's (`tengen token --role bot --sub NAME`).
    #[arg(long, env = "TENGEN_BOT_TOKEN", hide_env_values = true)]
    pub token: String,
    /// The engine's command line, started once per game, e.g.
    /// "/usr/games/gnugo --mode gtp --chinese-rules --level 10".
    #[arg(long, value_name = "COMMAND")]
    pub engine: Option<String>,
    /// Bot file (TOML): server, engine, max_games, [offer], [challenge].
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Games played at once, one engine process each [default: 1]
    #[arg(long, value_name = "N")]
    pub max_games: Option<usize>,
    /// Stop after this many games have ended.
    #[arg(long, value_name = "N")]
    pub games: Option<u32>,
    /// Longest think for one move in an untimed game, in seconds [default: 300]
    #[arg(long, value_name = "SECS")]
    pub untimed_move_secs: Option<u64>,

    /// Offer: board sizes accepted, e.g. 9,13,19 [default: any]
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub offer_sizes: Vec<u8>,
    /// Offer: rulesets accepted, e.g. chinese [default: any]
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub offer_rulesets: Vec<String>,
    /// Offer: time systems accepted: none, absolute, fischer, byoyomi, canadian, simple.
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub offer_time_systems: Vec<String>,
    /// Offer: shortest main time accepted, in milliseconds.
    #[arg(long, value_name = "MS")]
    pub offer_min_main_ms: Option<u64>,
    /// Offer: longest main time accepted, in milliseconds.
    #[arg(long, value_name = "MS")]
    pub offer_max_main_ms: Option<u64>,
    /// Offer: most handicap stones accepted [default: 0]
    #[arg(long, value_name = "N")]
    pub offer_max_handicap: Option<u8>,
    /// Post no offer: the bot declines every challenge to it and plays only the games it
    /// challenges for (--challenge).
    #[arg(long)]
    pub no_offer: bool,
    /// Accept open seeks the offer admits.
    #[arg(long)]
    pub answer_seeks: bool,

    /// Enter this tournament (by id) on connecting, and play its games as they are
    /// published.
    #[arg(long, value_name = "ID")]
    pub tournament: Option<String>,
    /// Tournament: the rank declared, e.g. 5k or 2d [default: the rank of the bot's rating]
    #[arg(long, value_name = "RANK")]
    pub rank: Option<Rank>,

    /// Challenge this user (by id), again after every game; a bot with an offer that
    /// admits the settings accepts at once.
    #[arg(long, value_name = "USER")]
    pub challenge: Option<String>,
    /// Challenge: board size [default: 19]
    #[arg(long, value_name = "N")]
    pub size: Option<u8>,
    /// Challenge: our colour: black, white or nigiri [default: nigiri]
    #[arg(long)]
    pub color: Option<String>,
    /// Challenge: ruleset [default: chinese]
    #[arg(long)]
    pub ruleset: Option<String>,
    /// Challenge: komi in points [default: the ruleset's]
    #[arg(long)]
    pub komi: Option<f64>,
    /// Challenge: handicap stones.
    #[arg(long)]
    pub handicap: Option<u8>,
    /// Challenge: time control as JSON, e.g.
    /// '{"system":"byoyomi","main_ms":60000,"periods":3,"period_ms":10000}'
    #[arg(long, value_name = "JSON")]
    pub clock: Option<String>,
}

/// Flags over the file over the defaults.
fn resolve(args: Args) -> anyhow::Result<BotConfig> {
    let file = match &args.config {
        Some(path) => BotFile::load(path)?,
        None => BotFile::default(),
    };
    let server = args
        .server
        .or(file.server)
        .context("say which server: --server ws://HOST:PORT/ws (or `server` in the bot file)")?;
    let engine = args
        .engine
        .or(file.engine)
        .context("say which engine: --engine \"COMMAND\" (or `engine` in the bot file)")?;
    let mut offer = file.offer.unwrap_or_default();
    if !args.offer_sizes.is_empty() {
        offer.board_sizes = args.offer_sizes;
    }
    if !args.offer_rulesets.is_empty() {
        offer.rulesets = args
            .offer_rulesets
            .iter()
            .map(|r| {
                r.parse()
                    .map_err(|e| anyhow::anyhow!("--offer-rulesets: {e}"))
            })
            .collect::<anyhow::Result<_>>()?;
    }
    if !args.offer_time_systems.is_empty() {
        offer.time_systems = args.offer_time_systems;
    }
    offer.min_main_ms = args.offer_min_main_ms.or(offer.min_main_ms);
    offer.max_main_ms = args.offer_max_main_ms.or(offer.max_main_ms);
    offer.max_handicap = args.offer_max_handicap.unwrap_or(offer.max_handicap);
    offer.check().map_err(anyhow::Error::msg)?;
    let no_offer = args.no_offer || file.no_offer.unwrap_or(false);

    let challenge = match (args.challenge, file.challenge) {
        (Some(opponent), from_file) => {
            let base = from_file.and_then(|c| c.settings);
            Some(ChallengePlan {
                opponent,
                settings: challenge_settings(
                    base,
                    &args_settings(
                        args.size,
                        args.color,
                        args.ruleset,
                        args.komi,
                        args.handicap,
                        args.clock,
                    )?,
                )?,
            })
        }
        (None, Some(c)) => Some(ChallengePlan {
            opponent: c.opponent,
            settings: c.settings.unwrap_or_default(),
        }),
        (None, None) => None,
    };
    let tournament = match (
        args.tournament
            .or(file.tournament.as_ref().map(|e| e.id.clone())),
        args.rank,
    ) {
        (Some(id), rank) => Some(Entry {
            id,
            rank: rank.or(file.tournament.and_then(|e| e.rank)),
        }),
        (None, Some(_)) => {
            bail!("--rank is the rank declared in a tournament: say which with --tournament")
        }
        (None, None) => None,
    };
    let max_games = args.max_games.or(file.max_games).unwrap_or(1);
    if max_games == 0 {
        bail!("--max-games must be at least 1");
    }
    Ok(BotConfig {
        server,
        token: args.token,
        engine,
        max_games,
        offer: (!no_offer).then_some(offer),
        challenge,
        answer_seeks: args.answer_seeks || file.answer_seeks.unwrap_or(false),
        games: args.games.or(file.games),
        untimed_move_limit: Duration::from_secs(
            args.untimed_move_secs
                .or(file.untimed_move_secs)
                .unwrap_or(300),
        ),
        tournament,
    })
}

/// The challenge flags as a JSON object of `GameSettings` fields.
fn args_settings(
    size: Option<u8>,
    color: Option<String>,
    ruleset: Option<String>,
    komi: Option<f64>,
    handicap: Option<u8>,
    clock: Option<String>,
) -> anyhow::Result<Map<String, Value>> {
    let mut m = Map::new();
    if let Some(size) = size {
        m.insert("board_size".into(), json!(size));
    }
    if let Some(color) = color {
        m.insert("color".into(), json!(color));
    }
    if let Some(ruleset) = ruleset {
        m.insert("ruleset".into(), json!(ruleset));
    }
    if let Some(komi) = komi {
        m.insert("komi".into(), json!(komi));
    }
    if let Some(handicap) = handicap {
        m.insert("handicap".into(), json!(handicap));
    }
    if let Some(clock) = clock {
        let clock: Value = serde_json::from_str(&clock).context("--clock is not JSON")?;
        m.insert("clock".into(), clock);
    }
    Ok(m)
}

fn challenge_settings(
    base: Option<GameSettings>,
    flags: &Map<String, Value>,
) -> anyhow::Result<GameSettings> {
    let mut value = serde_json::to_value(base.unwrap_or_default())?;
    if let Value::Object(obj) = &mut value {
        for (k, v) in flags {
            obj.insert(k.clone(), v.clone());
        }
    }
    serde_json::from_value(value).context("the challenge settings are not valid")
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let filter = EnvFilter::try_from_env("TENGEN_LOG").unwrap_or_else(|_| EnvFilter::new("info"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    let config = resolve(args)?;
    tracing::info!(
        server = %config.server,
        engine = %config.engine,
        max_games = config.max_games,
        "starting bot"
    );
    let runtime = tokio::runtime::Runtime::new()?;
    let summary = runtime.block_on(async move {
        tokio::select! {
            result = bot::run(config) => result.map(Some),
            () = stop_signal() => Ok(None),
        }
    })?;
    if let Some(s) = summary {
        tracing::info!(started = s.games_started, ended = s.games_ended, "done");
    }
    // Engines are killed as their games' tasks are dropped with the runtime.
    Ok(ExitCode::SUCCESS)
}

/// Waits for Ctrl-C or SIGTERM.
async fn stop_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: Args,
    }

    fn resolved(flags: &[&str]) -> anyhow::Result<BotConfig> {
        let base = [
            "bot",
            "--token",
            "t",
            "--server",
            "ws://h/ws",
            "--engine",
            "gnugo",
        ];
        let cli = Cli::try_parse_from(base.iter().chain(flags))?;
        resolve(cli.args)
    }

    #[test]
    fn a_tournament_is_entered_with_the_declared_rank() {
        let entry = resolved(&["--tournament", "cup", "--rank", "3k"])
            .unwrap()
            .tournament;
        assert_eq!(
            entry,
            Some(Entry {
                id: "cup".into(),
                rank: Some(Rank::Kyu(3))
            })
        );
        let unranked = resolved(&["--tournament", "cup"]).unwrap().tournament;
        assert_eq!(unranked.and_then(|e| e.rank), None);
        assert!(resolved(&[]).unwrap().tournament.is_none());
        let no_tournament = resolved(&["--rank", "3k"]).unwrap_err().to_string();
        assert!(no_tournament.contains("--tournament"), "{no_tournament}");
        assert!(resolved(&["--tournament", "cup", "--rank", "3p"]).is_err());
    }

    #[test]
    fn challenge_flags_override_the_file() {
        let base: GameSettings =
            serde_json::from_str(r#"{"board_size":13,"color":"white"}"#).unwrap();
        let flags = args_settings(Some(9), None, None, Some(6.5), None, None).unwrap();
        let s = challenge_settings(Some(base), &flags).unwrap();
        assert_eq!(s.board_size, 9);
        assert_eq!(s.komi.map(|k| k.points()), Some(6.5));
        assert_eq!(s.color, tengen::protocol::ColorChoice::White);
        let bad = args_settings(None, Some("purple".into()), None, None, None, None).unwrap();
        assert!(challenge_settings(None, &bad).is_err());
    }
}
