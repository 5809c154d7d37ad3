//! Game settings as a challenge carries them, and their validation. A challenge may leave
//! fields out; [`GameSettings::resolve`] fills in the defaults so every game stores and
//! shows complete settings.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

use super::error::{ErrorCode, Refusal};
use crate::clock::settings::listed;
use crate::clock::{ClockLimits, TimeControl};
use crate::rules::{
    self, Color, Game, HalfPoints, KoRule, MAX_SIZE, MIN_SIZE, Ruleset, SizeError, Vertex,
};

/// Where handicap stones go.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum HandicapPlacement {
    /// The traditional star points, placed by the server.
    #[default]
    Fixed,
    /// Black chooses the points with `place_handicap`.
    Free,
}

/// Who sees a game's moves when (`fair_play`).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum FairPlay {
    /// Everyone sees every event at once.
    #[default]
    Open,
    /// Spectators see moves `spectator_delay_moves` moves and `spectator_delay_ms` late
    /// (players and referees at once), and the players' chat is off.
    Tournament,
}

/// The colour the challenger takes.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum ColorChoice {
    Black,
    White,
    /// A fair draw by the server that both players can verify afterwards.
    #[default]
    Nigiri,
}

fn default_size() -> u8 {
    19
}

/// Everything that fixes how a game is played.
///
/// Read by hand (see the `Deserialize` impl) rather than derived: serde's messages lose
/// the field inside a tagged message, and the protocol promises that a refusal names it.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[schemars(default, deny_unknown_fields)]
pub struct GameSettings {
    pub board_size: u8,
    pub ruleset: Ruleset,
    /// Defaults to the ruleset's rule (situational superko for `chinese`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ko_rule: Option<KoRule>,
    /// Komi in points. Defaults to the ruleset's (7.5 = 3¾ stones for `chinese`), or 0 in a
    /// handicap game, where Black gives back N/2 stones instead (docs/RULES.md §7.3).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "super::schema::komi")]
    pub komi: Option<HalfPoints>,
    pub handicap: u8,
    pub handicap_placement: HandicapPlacement,
    /// The challenger's colour.
    pub color: ColorChoice,
    pub clock: TimeControl,
    /// Scheduled start, server Unix ms. Clocks run from then whether or not the players
    /// are there; a player absent `forfeit_after_ms` past it loses by forfeit, and if
    /// both are, both lose.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start_at: Option<i64>,
    /// Lateness allowed after a scheduled start.
    pub forfeit_after_ms: u64,
    /// How long a player may stay away from a running game before the opponent may
    /// claim it with `claim_win`.
    pub claim_after_ms: u64,
    /// How long the dead-stone phase may last (see client-protocol/scoring.md for what
    /// happens then).
    pub scoring_ms: u64,
    /// Whether the result changes the players' ratings (docs/RATINGS.md). Written only
    /// when true, so unrated settings read as they always did.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub rated: bool,
    /// The user id of the referee assigned to this game (tournament games), who may act
    /// on it beside any admin (client-protocol/referee.md).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub referee: Option<String>,
    /// Referee warnings that lose the game (Art. 20); 2 unless set.
    #[serde(skip_serializing_if = "is_default_warnings")]
    pub warnings_to_lose: u8,
    /// An illegal move attempt costs the turn: it is recorded and counts as a pass
    /// (Art. 19, 20.1) instead of being only refused.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub strict_illegal: bool,
    /// Untimed games: a player who has been to move this long, present or not, may be
    /// claimed against for stalling. Unset: no stalling claims.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stall_after_ms: Option<u64>,
    #[serde(skip_serializing_if = "is_open")]
    pub fair_play: FairPlay,
    /// Tournament games: how many of the latest moves spectators do not see yet.
    #[serde(skip_serializing_if = "is_default_delay")]
    pub spectator_delay_moves: u8,
    /// Tournament games: how long after a move spectators see it (0: only the delay in
    /// moves counts).
    #[serde(skip_serializing_if = "is_zero_ms")]
    pub spectator_delay_ms: u64,
    /// A correspondence game (client-protocol/correspondence.md): its clock counts days
    /// of wall time, from the game's creation, whether or not anyone is connected; it
    /// sleeps in the store while nobody watches; plans of conditional moves play in it.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub correspondence: bool,
    /// Correspondence games: whether a player's vacation stops their clock here
    /// (client-protocol/correspondence.md#vacation). True unless set false, as a
    /// tournament may.
    #[serde(skip_serializing_if = "is_true")]
    #[schemars(default = "yes")]
    pub vacation: bool,
    /// Correspondence games: whether each player's clock stands still on their weekend
    /// days, in their own time zone (client-protocol/correspondence.md#weekends).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub weekends: bool,
}

fn is_true(b: &bool) -> bool {
    *b
}

fn yes() -> bool {
    true
}

fn is_zero_ms(ms: &u64) -> bool {
    *ms == 0
}

fn is_open(f: &FairPlay) -> bool {
    *f == FairPlay::Open
}

/// The fields of `settings`, in their wire order.
const FIELDS: &[&str] = &[
    "board_size",
    "ruleset",
    "ko_rule",
    "komi",
    "handicap",
    "handicap_placement",
    "color",
    "clock",
    "start_at",
    "forfeit_after_ms",
    "claim_after_ms",
    "scoring_ms",
    "rated",
    "referee",
    "warnings_to_lose",
    "strict_illegal",
    "stall_after_ms",
    "fair_play",
    "spectator_delay_moves",
    "spectator_delay_ms",
    "correspondence",
    "vacation",
    "weekends",
];

/// The largest komi either way, in points.
pub(super) const MAX_KOMI_POINTS: i32 = 500;

/// Why a komi is refused; `shown` is the value as the client sent it.
fn bad_komi(shown: impl std::fmt::Display) -> String {
    format!(
        "settings.komi must be a multiple of 0.5 from -{MAX_KOMI_POINTS} to {MAX_KOMI_POINTS}, not {shown}"
    )
}

/// One field's value, or a refusal naming it (`settings.board_size: ...`).
fn field<T: DeserializeOwned>(name: &str, value: Value) -> Result<T, String> {
    serde_json::from_value(value).map_err(|e| format!("settings.{name}: {e}"))
}

impl<'de> Deserialize<'de> for GameSettings {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Value::deserialize(d)? {
            Value::Object(fields) => {
                GameSettings::from_fields(fields).map_err(serde::de::Error::custom)
            }
            other => Err(serde::de::Error::custom(format!(
                "settings must be an object, not {other}"
            ))),
        }
    }
}

impl GameSettings {
    /// Reads settings from their JSON fields, each refusal naming its field; absent
    /// fields keep their defaults.
    fn from_fields(fields: Map<String, Value>) -> Result<GameSettings, String> {
        let mut s = GameSettings::default();
        for (name, value) in fields {
            match name.as_str() {
                "board_size" => s.board_size = field(&name, value)?,
                "ruleset" => s.ruleset = field(&name, value)?,
                "ko_rule" => s.ko_rule = field(&name, value)?,
                "komi" => {
                    s.komi = match value {
                        Value::Null => None,
                        v => Some(
                            v.as_f64()
                                .and_then(HalfPoints::from_points)
                                .filter(|k| k.0.abs() <= 2 * MAX_KOMI_POINTS)
                                .ok_or_else(|| bad_komi(&v))?,
                        ),
                    }
                }
                "handicap" => s.handicap = field(&name, value)?,
                "handicap_placement" => s.handicap_placement = field(&name, value)?,
                "color" => s.color = field(&name, value)?,
                "clock" => {
                    let Value::Object(clock) = value else {
                        return Err(format!("settings.clock must be an object, not {value}"));
                    };
                    s.clock = TimeControl::from_fields(clock)
                        .map_err(|e| format!("settings.clock.{e}"))?;
                }
                "start_at" => s.start_at = field(&name, value)?,
                "forfeit_after_ms" => s.forfeit_after_ms = field(&name, value)?,
                "claim_after_ms" => s.claim_after_ms = field(&name, value)?,
                "scoring_ms" => s.scoring_ms = field(&name, value)?,
                "rated" => s.rated = field(&name, value)?,
                "referee" => s.referee = field(&name, value)?,
                "warnings_to_lose" => s.warnings_to_lose = field(&name, value)?,
                "strict_illegal" => s.strict_illegal = field(&name, value)?,
                "stall_after_ms" => s.stall_after_ms = field(&name, value)?,
                "fair_play" => s.fair_play = field(&name, value)?,
                "spectator_delay_moves" => s.spectator_delay_moves = field(&name, value)?,
                "spectator_delay_ms" => s.spectator_delay_ms = field(&name, value)?,
                "correspondence" => s.correspondence = field(&name, value)?,
                "vacation" => s.vacation = field(&name, value)?,
                "weekends" => s.weekends = field(&name, value)?,
                _ => {
                    return Err(format!(
                        "settings.{name} is not a setting; the settings are {}",
                        listed(FIELDS, "and")
                    ));
                }
            }
        }
        Ok(s)
    }
}

fn default_forfeit_after() -> u64 {
    15 * 60 * 1000
}

fn default_claim_after() -> u64 {
    2 * 60 * 1000
}

fn default_scoring() -> u64 {
    5 * 60 * 1000
}

/// Warnings that lose a game unless the settings say otherwise.
const DEFAULT_WARNINGS_TO_LOSE: u8 = 2;
/// The most warnings a game may allow.
const MAX_WARNINGS_TO_LOSE: u8 = 9;

fn is_default_warnings(n: &u8) -> bool {
    *n == DEFAULT_WARNINGS_TO_LOSE
}

/// Moves spectators of a tournament game are behind unless the settings say otherwise.
const DEFAULT_SPECTATOR_DELAY: u8 = 3;
/// The longest spectator delay, in moves (the room's ring of recent events covers it).
const MAX_SPECTATOR_DELAY: u8 = 20;
/// The longest spectator delay in time: ten minutes.
const MAX_SPECTATOR_DELAY_MS: u64 = 600_000;

fn is_default_delay(n: &u8) -> bool {
    *n == DEFAULT_SPECTATOR_DELAY
}

impl Default for GameSettings {
    fn default() -> Self {
        GameSettings {
            board_size: default_size(),
            ruleset: Ruleset::default(),
            ko_rule: None,
            komi: None,
            handicap: 0,
            handicap_placement: HandicapPlacement::default(),
            color: ColorChoice::default(),
            clock: TimeControl::None,
            start_at: None,
            forfeit_after_ms: default_forfeit_after(),
            claim_after_ms: default_claim_after(),
            scoring_ms: default_scoring(),
            rated: false,
            referee: None,
            warnings_to_lose: DEFAULT_WARNINGS_TO_LOSE,
            strict_illegal: false,
            stall_after_ms: None,
            fair_play: FairPlay::Open,
            spectator_delay_moves: DEFAULT_SPECTATOR_DELAY,
            spectator_delay_ms: 0,
            correspondence: false,
            vacation: true,
            weekends: false,
        }
    }
}

fn bad(message: String) -> Refusal {
    Refusal::new(ErrorCode::BadRequest, message)
}

/// The shortest claimable wait: even a bullet game waits this long for a reconnect.
const MIN_CLAIM_WAIT_MS: u64 = 10_000;

impl GameSettings {
    /// How long a player must be away, on their own turn, before the opponent may claim
    /// the game: a tenth of a player's whole time (main time plus all overtime), at least
    /// 10 s and at most the game's `claim_after_ms`; `claim_after_ms` in untimed games.
    /// A player away that long who then loses on time has escaped as surely as one
    /// claimed against (client-protocol/ratings.md#escapes).
    pub fn claim_wait_ms(&self) -> u64 {
        let tc = &self.clock;
        match crate::clock::PlayerClock::new(tc).remaining_ms(tc) {
            Some(whole) => (whole / 10).max(MIN_CLAIM_WAIT_MS).min(self.claim_after_ms),
            None => self.claim_after_ms,
        }
    }

    /// Whether spectators see this game late: a tournament game with a delay.
    pub fn delays_spectators(&self) -> bool {
        self.fair_play == FairPlay::Tournament
            && (self.spectator_delay_moves > 0 || self.spectator_delay_ms > 0)
    }

    /// Checks every field and fills in the defaults; refusals name the field.
    pub fn resolve(self, clock_limits: &ClockLimits) -> Result<GameSettings, Refusal> {
        if !(MIN_SIZE..=MAX_SIZE).contains(&self.board_size) {
            return Err(bad(format!(
                "settings.board_size must be from {MIN_SIZE} to {MAX_SIZE}, not {}",
                self.board_size
            )));
        }
        rules::check_handicap(self.handicap).map_err(|e| bad(format!("settings.handicap: {e}")))?;
        let area = u16::from(self.board_size) * u16::from(self.board_size);
        if u16::from(self.handicap) >= area {
            return Err(bad(
                "settings.handicap: more stones than the board has points".into(),
            ));
        }
        if self.ruleset.set_stones(self.board_size).is_none() {
            return Err(bad(format!(
                "settings.ruleset: the {} rules set four stones on the corner star points, which a {size}x{size} board does not have; use a board of 7 or more",
                self.ruleset,
                size = self.board_size
            )));
        }
        if self.handicap >= 2
            && self.handicap_placement == HandicapPlacement::Fixed
            && !self.starting_stones(&[]).is_empty()
        {
            return Err(bad(format!(
                "settings.handicap_placement: under the {} rules the set stones hold the corner star points; Black places handicap stones freely (handicap_placement free)",
                self.ruleset
            )));
        }
        if self.handicap >= 2 && self.handicap_placement == HandicapPlacement::Fixed {
            rules::fixed_handicap(self.board_size, self.handicap).map_err(|e| {
                bad(format!(
                    "settings.handicap: {e}; use handicap_placement free"
                ))
            })?;
        }
        if let Some(komi) = self.komi
            && komi.0.abs() > 2 * MAX_KOMI_POINTS
        {
            return Err(bad(bad_komi(komi)));
        }
        const DAY: u64 = 24 * 3600 * 1000;
        for (field, value, min) in [
            ("forfeit_after_ms", self.forfeit_after_ms, 0),
            ("claim_after_ms", self.claim_after_ms, 1000),
            ("scoring_ms", self.scoring_ms, 10_000),
        ] {
            if value < min || value > DAY {
                return Err(bad(format!(
                    "settings.{field} must be from {min} ms to one day"
                )));
            }
        }
        if let Some(stall) = self.stall_after_ms {
            if self.clock.is_timed() {
                return Err(bad(
                    "settings.stall_after_ms is for untimed games; a clock already ends a stall"
                        .into(),
                ));
            }
            if !(60_000..=DAY).contains(&stall) {
                return Err(bad(
                    "settings.stall_after_ms must be from 60000 ms to one day".into(),
                ));
            }
        }
        if self.spectator_delay_moves > MAX_SPECTATOR_DELAY {
            return Err(bad(format!(
                "settings.spectator_delay_moves must be from 0 to {MAX_SPECTATOR_DELAY}"
            )));
        }
        if self.spectator_delay_ms > MAX_SPECTATOR_DELAY_MS {
            return Err(bad(format!(
                "settings.spectator_delay_ms must be from 0 to {MAX_SPECTATOR_DELAY_MS} (ten minutes)"
            )));
        }
        if !(1..=MAX_WARNINGS_TO_LOSE).contains(&self.warnings_to_lose) {
            return Err(bad(format!(
                "settings.warnings_to_lose must be from 1 to {MAX_WARNINGS_TO_LOSE}"
            )));
        }
        if self
            .referee
            .as_ref()
            .is_some_and(|r| r.is_empty() || r.len() > 128)
        {
            return Err(bad(
                "settings.referee must be a user id of 1 to 128 bytes".into()
            ));
        }
        if let Some(start) = self.start_at
            && (start < 0 || start > crate::time::wall_ms() + 366 * DAY as i64)
        {
            return Err(bad(
                "settings.start_at must be a Unix time in ms within a year".into(),
            ));
        }
        let clock_limits = if self.correspondence {
            self.check_correspondence()?;
            clock_limits.for_correspondence()
        } else if self.weekends {
            return Err(bad(
                "settings.weekends: only a correspondence game has weekends".into(),
            ));
        } else {
            *clock_limits
        };
        self.clock
            .validate(&clock_limits)
            .map_err(|e| bad(format!("settings.clock.{}: {e}", e.field())))?;
        Ok(self.with_defaults())
    }

    /// What a correspondence game cannot have: no clock (it would sleep for ever; the
    /// clock in days is its rule on absence), a scheduled start (lateness is a live
    /// tournament's rule), or free handicap placement (its event records no wall time,
    /// which a correspondence game's rebuild times its clocks by).
    fn check_correspondence(&self) -> Result<(), Refusal> {
        if !self.clock.is_timed() {
            return Err(bad(
                "settings.clock: a correspondence game needs a clock; its days per move are the rule on absence".into(),
            ));
        }
        if self.start_at.is_some() {
            return Err(bad(
                "settings.start_at: a correspondence game starts when it is accepted".into(),
            ));
        }
        if self.handicap >= 2 && self.handicap_placement == HandicapPlacement::Free {
            return Err(bad(
                "settings.handicap_placement: a correspondence game places its handicap stones fixed".into(),
            ));
        }
        Ok(())
    }

    /// Fills in the repetition rule and komi left unset, so that every message and
    /// record that carries the settings shows the complete terms (client-protocol/lobby.md).
    /// The server's own games (automatch) take this path; clients' go through [`resolve`].
    ///
    /// [`resolve`]: GameSettings::resolve
    pub fn with_defaults(mut self) -> GameSettings {
        self.ko_rule.get_or_insert(self.ruleset.default_ko_rule());
        let komi = if self.handicap >= 2 {
            HalfPoints(0)
        } else {
            self.ruleset.default_komi()
        };
        self.komi.get_or_insert(komi);
        self
    }

    /// The repetition rule (the ruleset's unless set).
    pub fn ko_rule(&self) -> KoRule {
        self.ko_rule.unwrap_or(self.ruleset.default_ko_rule())
    }

    /// Komi in half points (the resolved default unless set).
    pub fn komi(&self) -> HalfPoints {
        self.komi.unwrap_or(self.ruleset.default_komi())
    }

    /// Refuses a rated game under the ancient rules unless the server rates them
    /// (`rules.rated_ancient`): another game than the one the ratings measure.
    pub fn check_rated_ruleset(&self, rated_ancient: bool) -> Result<(), Refusal> {
        if self.rated && self.ruleset == Ruleset::AncientChinese && !rated_ancient {
            return Err(Refusal::new(
                ErrorCode::RatedNotAllowed,
                format!(
                    "this server does not rate games under the {} rules; post the game unrated",
                    self.ruleset
                ),
            ));
        }
        Ok(())
    }

    /// The stones on the board before the first move: the ruleset's set stones (座子
    /// under the ancient rules, docs/RULES.md §9.1), then Black's `handicap` stones.
    pub fn starting_stones(&self, handicap: &[Vertex]) -> Vec<(Vertex, Color)> {
        let mut stones = self.ruleset.set_stones(self.board_size).unwrap_or_default();
        stones.extend(handicap.iter().map(|&v| (v, Color::Black)));
        stones
    }

    /// Who is to move when the game starts: Black when it has free handicap stones to
    /// place, White after fixed ones, else the ruleset's first player (White under the
    /// ancient rules). After free handicap stones White moves.
    pub fn first_to_move(&self) -> Color {
        match (self.handicap >= 2, self.handicap_placement) {
            (true, HandicapPlacement::Free) => Color::Black,
            (true, HandicapPlacement::Fixed) => Color::White,
            (false, _) => self.ruleset.first_in_even_game(),
        }
    }

    /// The game before its first move, with the `handicap` stones on the board so far
    /// (fixed ones, or free ones once placed: then White moves).
    pub fn starting_game(&self, handicap: &[Vertex]) -> Result<Game, SizeError> {
        let first = if handicap.is_empty() {
            self.first_to_move()
        } else {
            Color::White
        };
        Game::with_setup(
            self.board_size,
            self.ko_rule(),
            &self.starting_stones(handicap),
            first,
        )
    }

    /// What counting needs.
    pub fn score_rules(&self) -> rules::ScoreRules {
        rules::ScoreRules {
            ruleset: self.ruleset,
            komi: self.komi(),
            handicap: self.handicap,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_filled_in() {
        let s: GameSettings = serde_json::from_str("{}").unwrap();
        let s = s.resolve(&ClockLimits::default()).unwrap();
        assert_eq!(s.board_size, 19);
        assert_eq!(s.ko_rule, Some(KoRule::Situational));
        assert_eq!(s.komi, Some(HalfPoints(15)));
        let h: GameSettings = serde_json::from_str(r#"{"board_size":9,"handicap":3}"#).unwrap();
        assert_eq!(
            h.resolve(&ClockLimits::default()).unwrap().komi,
            Some(HalfPoints(0))
        );
    }

    /// Why `json` is refused, whether by reading or by [`GameSettings::resolve`].
    fn refusal(json: &str) -> String {
        match serde_json::from_str::<GameSettings>(json) {
            Err(e) => e.to_string(),
            Ok(s) => {
                let err = s.resolve(&ClockLimits::default()).unwrap_err();
                assert_eq!(err.code, ErrorCode::BadRequest);
                err.message
            }
        }
    }

    #[test]
    fn refusals_name_the_field() {
        for (json, path) in [
            (r#"{"board_size":26}"#, "settings.board_size"),
            (r#"{"board_size":-1}"#, "settings.board_size"),
            (r#"{"board_size":"9"}"#, "settings.board_size"),
            (r#"{"handicap":1}"#, "settings.handicap"),
            (r#"{"board_size":5,"handicap":2}"#, "settings.handicap"),
            (r#"{"komi":600}"#, "settings.komi"),
            (r#"{"komi":7.25}"#, "settings.komi"),
            (r#"{"ruleset":"go"}"#, "settings.ruleset"),
            (
                r#"{"ruleset":"ancient-chinese","board_size":6}"#,
                "settings.ruleset",
            ),
            (
                r#"{"ruleset":"ancient-chinese","handicap":2}"#,
                "settings.handicap_placement",
            ),
            (r#"{"color":"red"}"#, "settings.color"),
            (r#"{"boardsize":9}"#, "settings.boardsize"),
            (r#"{"clock":[]}"#, "settings.clock"),
            (
                r#"{"clock":{"system":"byoyomi","main_ms":0,"periods":0,"period_ms":30000}}"#,
                "settings.clock.periods",
            ),
            (
                r#"{"clock":{"system":"none","main_ms":5}}"#,
                "settings.clock.main_ms",
            ),
        ] {
            let message = refusal(json);
            assert!(message.starts_with(path), "{json}: {message}");
        }
        let message = refusal("[]");
        assert!(
            message.starts_with("settings must be an object"),
            "{message}"
        );
    }

    #[test]
    fn komi_has_one_bound_and_one_message() {
        for komi in ["500.5", "1500", "7.25", "\"7.5\""] {
            let message = refusal(&format!(r#"{{"komi":{komi}}}"#));
            assert!(message.contains("from -500 to 500"), "{komi}: {message}");
        }
        let built = GameSettings {
            komi: Some(HalfPoints(-1001)),
            ..GameSettings::default()
        };
        let err = built.resolve(&ClockLimits::default()).unwrap_err();
        assert_eq!(err.message, bad_komi(HalfPoints(-1001)));
        let edge: GameSettings = serde_json::from_str(r#"{"komi":-500}"#).unwrap();
        assert_eq!(edge.komi, Some(HalfPoints(-1000)));
        let unset: GameSettings = serde_json::from_str(r#"{"komi":null}"#).unwrap();
        assert_eq!(unset.komi, None);
    }

    /// The ancient rules: no komi, White first, the set stones before any handicap.
    #[test]
    fn the_ancient_rules_start_from_the_set_stones() {
        let s: GameSettings =
            serde_json::from_str(r#"{"board_size":9,"ruleset":"ancient-chinese"}"#).unwrap();
        let s = s.resolve(&ClockLimits::default()).unwrap();
        assert_eq!(s.komi, Some(HalfPoints(0)));
        assert_eq!(s.ko_rule, Some(KoRule::Situational));
        assert_eq!(s.first_to_move(), Color::White);
        assert_eq!(s.starting_stones(&[]).len(), 4);
        let h: GameSettings = serde_json::from_str(
            r#"{"board_size":9,"ruleset":"ancient-chinese","handicap":2,"handicap_placement":"free"}"#,
        )
        .unwrap();
        let h = h.resolve(&ClockLimits::default()).unwrap();
        assert_eq!(
            h.first_to_move(),
            Color::Black,
            "Black places its stones first"
        );
        let e5 = Vertex::new(4, 4);
        assert_eq!(h.starting_stones(&[e5]).last(), Some(&(e5, Color::Black)));
        assert_eq!(h.starting_stones(&[e5]).len(), 5);
    }

    #[test]
    fn resolved_settings_read_back_as_they_were() {
        let json = r#"{"board_size":13,"ruleset":"japanese","color":"white","start_at":5,"clock":{"system":"fischer","main_ms":1,"increment_ms":2,"max_ms":3}}"#;
        let s: GameSettings = serde_json::from_str(json).unwrap();
        let s = s.resolve(&ClockLimits::default()).unwrap();
        let again: GameSettings =
            serde_json::from_str(&serde_json::to_string(&s).unwrap()).unwrap();
        assert_eq!(again, s);
    }
}
