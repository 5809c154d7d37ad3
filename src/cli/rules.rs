//! `tengen rules`: replay game records under a ruleset and print one JSON verdict and
//! count per file. The interface is fixed by issue 2 (other tools read this output), so
//! fields are only ever added, never renamed.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context as _;
use clap::builder::{PossibleValuesParser, TypedValueParser as _};
use serde::Serialize;

use tengen::protocol::GroupTax;
use tengen::rules::sgf::GameRecord;
use tengen::rules::{
    Color, DeadStones, Game, HalfPoints, KoRule, Ruleset, ScoreRules, Vertex, count,
};

const AFTER_HELP: &str = "\
Each file's main line is replayed from its setup stones (AB/AW) with the colour the file
gives each move (B[] is a pass, and so is B[tt] on boards up to 19x19; passes count as
moves). The first player is PL[], else the colour of the first move. Replay stops at the
first illegal move, and the counts are then made on the position before it.

One JSON object per file is printed on its own line:
  {\"file\":\"x.sgf\",\"size\":19,\"moves\":211,\"legal\":true,\"illegal\":null,
   \"black\":185.0,\"white\":176.0,\"result\":\"B+1.5\",\"margin_stones\":0.75}
`moves` counts every move of the main line; `illegal` is null or
{\"move\":57,\"vertex\":\"D4\",\"reason\":\"superko\"} with the move numbered from 1 and reason
occupied, suicide, ko, superko or off_board. `black` and `white` are areas (chinese,
tromp-taylor) or territory plus prisoners (japanese, korean); `result` is in SGF form and
`margin_stones` is Black's margin in stones after komi and, under chinese rules, the
handicap compensation of one point per handicap stone (HA[]). Under ancient-chinese
rules (RU[Ancient Chinese]) `black` and `white` are the areas less one point per living
group, and \"tax\":{\"black\":2,\"white\":3} gives those groups.

Exit status: 0 when every file is legal, 1 when some file has an illegal move, 2 when a
file cannot be read or an argument is wrong (the message on stderr names the file).";

/// Arguments of `tengen rules`.
#[derive(Debug, clap::Args)]
#[command(after_long_help = AFTER_HELP)]
pub struct Args {
    /// Rules to replay and count under [default: the file's RU[], else chinese]
    #[arg(
        long,
        value_name = "RULESET",
        value_parser = PossibleValuesParser::new(["chinese", "japanese", "korean", "tromp-taylor", "ancient-chinese"])
            .try_map(|s| s.parse::<Ruleset>()),
    )]
    pub ruleset: Option<Ruleset>,

    /// Repetition rule [default: the file's, as tengen writes it in RU[] (`RU[Chinese,
    /// simple ko]`), else the ruleset's: situational for chinese and ancient-chinese,
    /// simple for japanese and korean, positional for tromp-taylor]
    #[arg(
        long,
        value_name = "RULE",
        value_parser = PossibleValuesParser::new(["situational", "positional", "simple"])
            .try_map(|s| s.parse::<KoRule>()),
    )]
    pub superko: Option<KoRule>,

    /// Komi in points, a multiple of 0.5 such as 7.5 or -3 [default: the file's KM[], else
    /// 7.5 for area and 6.5 for territory counting, 0 under ancient-chinese]
    #[arg(long, value_name = "POINTS", allow_negative_numbers = true, value_parser = parse_komi)]
    pub komi: Option<HalfPoints>,

    /// Dead stones on the final position as GTP vertices (e.g. D4,Q16); each one marks its
    /// whole chain. The flag may be repeated
    #[arg(long, value_name = "VERTEX,...", value_delimiter = ',', value_parser = parse_vertex)]
    pub dead: Vec<Vertex>,

    /// SGF files to replay and count
    #[arg(required = true, value_name = "FILE.sgf")]
    pub files: Vec<PathBuf>,
}

fn parse_komi(s: &str) -> Result<HalfPoints, String> {
    HalfPoints::parse_points(s)
        .ok_or_else(|| format!("`{s}` is not a komi in points that is a multiple of 0.5"))
}

fn parse_vertex(s: &str) -> Result<Vertex, String> {
    Vertex::parse_unchecked(s.trim()).map_err(|e| e.to_string())
}

/// The verdict on one file, in the order the fields are printed.
#[derive(Debug, Serialize)]
struct Verdict {
    file: String,
    size: u8,
    moves: usize,
    legal: bool,
    illegal: Option<Illegal>,
    black: f64,
    white: f64,
    result: String,
    margin_stones: f64,
    /// Living groups per side under rules with a group tax.
    #[serde(skip_serializing_if = "Option::is_none")]
    tax: Option<GroupTax>,
}

#[derive(Debug, Serialize)]
struct Illegal {
    /// 1-based among the moves of the main line.
    #[serde(rename = "move")]
    number: usize,
    vertex: String,
    reason: &'static str,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let mut stdout = std::io::stdout().lock();
    let mut status = 0u8;
    for path in &args.files {
        match replay(path, &args) {
            Ok(verdict) => {
                if !verdict.legal {
                    status = status.max(1);
                }
                let line = serde_json::to_string(&verdict)?;
                writeln!(stdout, "{line}").context("cannot write to standard output")?;
            }
            Err(e) => {
                // Flush first so the output and the message stay in file order.
                stdout.flush().context("cannot write to standard output")?;
                eprintln!("tengen: {}: {e:#}", path.display());
                status = 2;
            }
        }
    }
    stdout.flush().context("cannot write to standard output")?;
    Ok(ExitCode::from(status))
}

/// Replays and counts one file.
fn replay(path: &Path, args: &Args) -> anyhow::Result<Verdict> {
    let bytes = std::fs::read(path).context("cannot read the file")?;
    let record = GameRecord::from_sgf_bytes(&bytes)?;
    let size = record.size;
    // tengen writes a ko rule other than the ruleset's own as `RU[Chinese, simple ko]`.
    let (ru, ru_ko) = match record.ruleset.as_deref().map(|ru| ru.split_once(',')) {
        Some(Some((ru, ko))) => (Some(ru), ko.trim().strip_suffix(" ko")),
        Some(None) => (record.ruleset.as_deref(), None),
        None => (None, None),
    };
    let ruleset = match (args.ruleset, ru) {
        (Some(r), _) => r,
        (None, Some(ru)) => ru.parse().unwrap_or_else(|_| {
            eprintln!(
                "tengen: {}: RU[{ru}] is not a ruleset tengen knows; replaying under chinese rules",
                path.display()
            );
            Ruleset::Chinese
        }),
        (None, None) => Ruleset::Chinese,
    };
    let ko_rule = args
        .superko
        .or_else(|| ru_ko.and_then(|ko| ko.parse().ok()))
        .unwrap_or_else(|| ruleset.default_ko_rule());
    let komi = args
        .komi
        .or(record.komi)
        .unwrap_or_else(|| ruleset.default_komi());

    let mut game = Game::with_setup(size, ko_rule, &record.setup, record.first_to_move())?;
    let mut illegal = None;
    for (i, m) in record.moves.iter().enumerate() {
        if let Err(e) = game.play(m.color, m.mv) {
            illegal = Some(Illegal {
                number: i + 1,
                vertex: m.mv.to_string(),
                reason: e.reason(),
            });
            break;
        }
    }

    let board = game.board();
    let mut dead = DeadStones::new();
    for &v in &args.dead {
        anyhow::ensure!(
            board.contains(v),
            "--dead {v} is not on the {size}x{size} board"
        );
        if !dead.set_chain(board, v, true) {
            eprintln!(
                "tengen: {}: --dead {v} is an empty point of the final position; ignored",
                path.display()
            );
        }
    }
    let rules = ScoreRules {
        ruleset,
        komi,
        handicap: record.handicap.unwrap_or(0),
    };
    let prisoners = [game.prisoners(Color::Black), game.prisoners(Color::White)];
    let score = count(board, &dead, &rules, prisoners);
    Ok(Verdict {
        file: path.display().to_string(),
        size,
        moves: record.moves.len(),
        legal: illegal.is_none(),
        illegal,
        black: score.black.points(),
        white: score.white.points(),
        result: score.result.to_string(),
        margin_stones: score.margin_stones(),
        tax: score.tax.map(|[black, white]| GroupTax { black, white }),
    })
}
