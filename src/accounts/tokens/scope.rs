//! What a personal API token may do: its scopes, and which scope each request needs
//! (the matrix in client-protocol/accounts.md#scopes). A session's access token (the
//! JWT of a login, `tengen token`, the dev login) holds every scope its role allows; a
//! personal token only those its owner chose. Pure: no I/O, tested as a table.

use serde::{Deserialize, Serialize};

use crate::protocol::{ClientMsg, GameAction, LobbyMsg, Role, TournamentAction};

/// One thing a personal token may be allowed. Every scope lets its holder read (watch
/// games and the lobby, list); `read` alone allows nothing more.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
pub enum Scope {
    /// Watch, list, and read what the account may read.
    #[serde(rename = "read")]
    Read,
    /// Act as a person's account: seek, challenge, accept, automatch, play, chat,
    /// block, report, save reviews, and a referee's or admin's actions for theirs.
    #[serde(rename = "play")]
    Play,
    /// Act as a bot account: all that `play` allows a person, plus the standing offer and
    /// the bot's profile. Only a bot account's tokens hold it, and a bot acts only with it.
    #[serde(rename = "bot")]
    Bot,
    /// What a tournament's director or chief referee does (referee and admin accounts),
    /// and each board's pairing costs in the tournament routes.
    #[serde(rename = "tournament:direct")]
    TournamentDirect,
}

impl Scope {
    pub const ALL: [Scope; 4] = [
        Scope::Read,
        Scope::Play,
        Scope::Bot,
        Scope::TournamentDirect,
    ];

    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Read => "read",
            Scope::Play => "play",
            Scope::Bot => "bot",
            Scope::TournamentDirect => "tournament:direct",
        }
    }

    /// Parses a wire name.
    pub fn parse(text: &str) -> Option<Scope> {
        Scope::ALL.into_iter().find(|s| s.as_str() == text)
    }

    /// Whether an account of `role` may hold this scope on a token: `bot` only a bot's,
    /// `play` anyone's but a bot's (a bot acts with `bot`), `tournament:direct` a
    /// referee's or an admin's. Guests hold no personal tokens at all.
    pub fn allowed_to(self, role: Role) -> bool {
        match self {
            Scope::Read => true,
            Scope::Play => role != Role::Bot,
            Scope::Bot => role == Role::Bot,
            Scope::TournamentDirect => matches!(role, Role::Referee | Role::Admin),
        }
    }

    /// The scope that acting as an account of `role` needs.
    pub fn to_act_as(role: Role) -> Scope {
        match role {
            Role::Bot => Scope::Bot,
            _ => Scope::Play,
        }
    }
}

/// A set of scopes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Scopes(u8);

impl Scopes {
    fn bit(scope: Scope) -> u8 {
        1 << (scope as u8)
    }

    pub fn of(scopes: impl IntoIterator<Item = Scope>) -> Scopes {
        Scopes(scopes.into_iter().fold(0, |all, s| all | Scopes::bit(s)))
    }

    pub fn contains(self, scope: Scope) -> bool {
        self.0 & Scopes::bit(scope) != 0
    }

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The scopes in their order of declaration.
    pub fn list(self) -> Vec<Scope> {
        Scope::ALL
            .into_iter()
            .filter(|s| self.contains(*s))
            .collect()
    }

    /// The stored form: wire names separated by spaces.
    pub fn to_text(self) -> String {
        let names: Vec<&str> = self.list().into_iter().map(Scope::as_str).collect();
        names.join(" ")
    }

    /// Reads the stored form; unknown names (from a newer version) are dropped, so a
    /// token never gains a scope by being read.
    pub fn from_text(text: &str) -> Scopes {
        Scopes::of(text.split_whitespace().filter_map(Scope::parse))
    }
}

/// What a connection or request was let in with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Grant {
    /// A session's access token: everything the account's role allows.
    Session,
    /// A personal token: its id (`tgn_…`, to end its connections when it is revoked)
    /// and its scopes.
    Personal { token: String, scopes: Scopes },
}

impl Grant {
    /// Whether this grant allows `need`. Reading is always allowed.
    pub fn allows(&self, need: Scope) -> bool {
        match self {
            Grant::Session => true,
            Grant::Personal { scopes, .. } => need == Scope::Read || scopes.contains(need),
        }
    }

    /// The personal token's id, if any.
    pub fn token(&self) -> Option<&str> {
        match self {
            Grant::Session => None,
            Grant::Personal { token, .. } => Some(token),
        }
    }
}

/// The scope a WebSocket request needs from a connection logged in as `role`: reading
/// for what changes nothing (log in, ping, lists, watching, joining and leaving a game
/// as a spectator would), `bot` for a bot's standing offer, and acting as the account
/// ([`Scope::to_act_as`]) for everything else.
pub fn needed(msg: &ClientMsg, role: Role) -> Scope {
    use LobbyMsg as L;
    use TournamentAction as T;
    match msg {
        ClientMsg::Lobby(
            L::Auth { .. }
            | L::Ping {}
            | L::ListSeeks {}
            | L::ListGames {}
            | L::WatchLobby {}
            | L::UnwatchLobby {}
            | L::ListBots {}
            | L::ListMutes {}
            | L::ListRefereeCalls {}
            | L::ListReports {},
        ) => Scope::Read,
        ClientMsg::Lobby(L::Offer { .. } | L::WithdrawOffer {}) => Scope::Bot,
        ClientMsg::Lobby(
            L::ListNotices { .. }
            | L::GetNotificationSettings {}
            | L::GetVacation {}
            | L::GetCalendar {},
        ) => Scope::Read,
        ClientMsg::Lobby(L::CreateTournament { .. }) => Scope::TournamentDirect,
        ClientMsg::Lobby(_) => Scope::to_act_as(role),
        ClientMsg::Game {
            action: GameAction::Join { .. } | GameAction::Leave {},
            ..
        } => Scope::Read,
        ClientMsg::Game { .. } => Scope::to_act_as(role),
        ClientMsg::Tournament { action, .. } => match action {
            T::WatchTournament {} | T::UnwatchTournament {} => Scope::Read,
            T::Register { .. } | T::Withdraw { player: None } | T::Appeal { .. } => {
                Scope::to_act_as(role)
            }
            // What only a director or the chief referee may do.
            T::Configure { .. }
            | T::Withdraw { player: Some(_) }
            | T::Disqualify { .. }
            | T::Bye { .. }
            | T::Pair {}
            | T::Swap { .. }
            | T::Publish {}
            | T::Adjust { .. }
            | T::RuleAppeal { .. } => Scope::TournamentDirect,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::decode;

    fn need(frame: &str, role: Role) -> Scope {
        let request = decode(frame).unwrap_or_else(|e| panic!("{frame}: {:?}", e.refusal));
        needed(&request.msg, role)
    }

    fn personal(scopes: &[Scope]) -> Grant {
        Grant::Personal {
            token: "tgn_x".into(),
            scopes: Scopes::of(scopes.iter().copied()),
        }
    }

    #[test]
    fn the_matrix_of_requests_and_scopes() {
        let read = personal(&[Scope::Read]);
        let play = personal(&[Scope::Play]);
        let bot = personal(&[Scope::Bot]);
        let director = personal(&[Scope::TournamentDirect]);
        // (frame, role, read, play, bot, tournament:direct)
        let table = [
            (
                r#"{"type":"list_games"}"#,
                Role::Player,
                true,
                true,
                true,
                true,
            ),
            (
                r#"{"type":"watch_lobby"}"#,
                Role::Player,
                true,
                true,
                true,
                true,
            ),
            (
                r#"{"type":"join","game_id":"g"}"#,
                Role::Player,
                true,
                true,
                true,
                true,
            ),
            (
                r#"{"type":"play","game_id":"g","move_number":1,"vertex":"D4"}"#,
                Role::Player,
                false,
                true,
                false,
                false,
            ),
            (
                r#"{"type":"chat","game_id":"g","text":"hi"}"#,
                Role::Player,
                false,
                true,
                false,
                false,
            ),
            (
                r#"{"type":"play","game_id":"g","move_number":1,"vertex":"D4"}"#,
                Role::Bot,
                false,
                false,
                true,
                false,
            ),
            (
                r#"{"type":"offer","offer":{"board_sizes":[9]}}"#,
                Role::Bot,
                false,
                false,
                true,
                false,
            ),
            (
                r#"{"type":"withdraw_offer"}"#,
                Role::Player,
                false,
                false,
                true,
                false,
            ),
            (
                r#"{"type":"automatch","sizes":[9],"speeds":["live"]}"#,
                Role::Player,
                false,
                true,
                false,
                false,
            ),
            (
                r#"{"type":"watch_tournament","tournament_id":"t"}"#,
                Role::Player,
                true,
                true,
                true,
                true,
            ),
            (
                r#"{"type":"register","tournament_id":"t"}"#,
                Role::Player,
                false,
                true,
                false,
                false,
            ),
            (
                r#"{"type":"withdraw","tournament_id":"t","player":"bob"}"#,
                Role::Referee,
                false,
                false,
                false,
                true,
            ),
            (
                r#"{"type":"publish","tournament_id":"t"}"#,
                Role::Referee,
                false,
                false,
                false,
                true,
            ),
            (
                r#"{"type":"list_notices"}"#,
                Role::Player,
                true,
                true,
                true,
                true,
            ),
            (
                r#"{"type":"warn","game_id":"g","color":"black","reason":"x"}"#,
                Role::Referee,
                false,
                true,
                false,
                false,
            ),
        ];
        for (frame, role, r, p, b, d) in table {
            let scope = need(frame, role);
            for (grant, want) in [(&read, r), (&play, p), (&bot, b), (&director, d)] {
                assert_eq!(
                    grant.allows(scope),
                    want,
                    "{frame} as {role:?} with {grant:?}"
                );
            }
            assert!(
                Grant::Session.allows(scope),
                "a session may do anything: {frame}"
            );
        }
    }

    #[test]
    fn who_may_hold_which_scope() {
        assert!(Scope::Play.allowed_to(Role::Player));
        assert!(!Scope::Play.allowed_to(Role::Bot));
        assert!(Scope::Bot.allowed_to(Role::Bot));
        assert!(!Scope::Bot.allowed_to(Role::Player));
        assert!(!Scope::TournamentDirect.allowed_to(Role::Player));
        assert!(Scope::TournamentDirect.allowed_to(Role::Referee));
        assert!(Scope::Read.allowed_to(Role::Bot));
    }

    #[test]
    fn scopes_survive_their_stored_form_and_unknown_names_are_dropped() {
        let scopes = Scopes::of([Scope::TournamentDirect, Scope::Read]);
        assert_eq!(scopes.to_text(), "read tournament:direct");
        assert_eq!(Scopes::from_text(&scopes.to_text()), scopes);
        assert_eq!(
            Scopes::from_text("play admin:all"),
            Scopes::of([Scope::Play])
        );
    }
}
