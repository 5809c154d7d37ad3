//! One tournament's director task: it alone changes its tournament. Requests arrive on
//! a bounded channel and results from the game-lifecycle bus; each change is decided on
//! the state, committed to the store's log, applied, and only then told to the watchers
//! of the tournament's channel. Publishing a round starts its games through the game
//! starter. In a cluster it runs on the node that holds the tournament's lease, and the
//! other nodes forward it their requests ([`Request`], [`Reply`]: they cross the bus).

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use tokio::sync::{broadcast, mpsc, oneshot, watch};

use super::channel::Channel;
use super::entry::Entry;
use super::state::{Newcomer, Tournament, fresh_secrets, nigiri_seed, outcome_of};
use crate::cluster::wire::WireRefusal;
use crate::fanout::encode;
use crate::ids::new_id;
use crate::lifecycle::{GameNews, Lifecycle};
use crate::lobby::create::Seating;
use crate::notify::Notices;
use crate::protocol::{
    ErrorCode, FairPlay, NigiriProof, NoticeKind, NoticePayload, Refusal, ServerMsg,
    TournamentAction, TournamentView, UserInfo,
};
use crate::rules::GameResult;
use crate::standings::Ranks;
use crate::starter::Starter;
use crate::store::{Store, StoreError, TournamentEntry};
use crate::time::wall_ms;
use crate::tournament::field::Status;

/// Requests waiting for one director at most; senders wait beyond.
pub const QUEUE: usize = 64;
/// How often a director with games in play reads their results from the store: in a
/// cluster a game may run on another node, whose lifecycle bus this one does not hear.
const RESULTS_POLL: std::time::Duration = std::time::Duration::from_secs(15);

/// What the director task needs of the server.
pub struct Deps {
    pub store: Arc<dyn Store>,
    pub starter: Arc<Starter>,
    pub lifecycle: Lifecycle,
    pub ranks: Ranks,
    /// Tells each player of a published round where they play.
    pub notices: Arc<Notices>,
    pub shutdown: watch::Receiver<bool>,
}

pub type Answer = Result<Option<Box<TournamentView>>, Refusal>;

/// A request to the director, from this node or forwarded by another.
#[derive(Debug, Serialize, Deserialize)]
pub enum Request {
    /// An action of `user` (None: not logged in); watching is the channel's, not this.
    Act {
        user: Option<UserInfo>,
        action: TournamentAction,
    },
    /// A director brings in players from a file.
    Import {
        user: UserInfo,
        players: Vec<Newcomer>,
    },
}

/// The director's answer to a [`Request`].
#[derive(Debug, Serialize, Deserialize)]
pub enum Reply {
    /// To an action: the tournament, for the actions that show it.
    Acted(Option<Box<TournamentView>>),
    /// To an import: how many players were new.
    Imported(usize),
    Refused(WireRefusal),
}

impl Reply {
    /// The answer to an action.
    pub fn acted(self) -> Answer {
        match self {
            Reply::Acted(view) => Ok(view),
            Reply::Imported(_) => Ok(None),
            Reply::Refused(refusal) => Err(refusal.into()),
        }
    }

    /// The answer to an import.
    pub fn imported(self) -> Result<usize, Refusal> {
        match self {
            Reply::Imported(new) => Ok(new),
            Reply::Acted(_) => Ok(0),
            Reply::Refused(refusal) => Err(refusal.into()),
        }
    }
}

pub enum Command {
    Request {
        request: Request,
        reply: oneshot::Sender<Reply>,
    },
    /// The tournament as it is now.
    Snapshot {
        reply: oneshot::Sender<Box<Tournament>>,
    },
    /// Stop: another node runs the tournament now.
    Stop,
}

/// Sends `request` to the director on `director` and waits for its reply.
pub async fn ask(director: &mpsc::Sender<Command>, request: Request) -> Reply {
    let (reply, answer) = oneshot::channel();
    let gone = || {
        Reply::Refused(
            Refusal::new(ErrorCode::Unavailable, "the tournament's director stopped").into(),
        )
    };
    if director
        .send(Command::Request { request, reply })
        .await
        .is_err()
    {
        return gone();
    }
    answer.await.unwrap_or_else(|_| gone())
}

struct Director {
    state: Tournament,
    /// The number of the log's last entry.
    seq: u64,
    deps: Arc<Deps>,
    channel: Arc<Channel>,
    /// Another node wrote to the log first: this task's state is behind, so it stops.
    stale: bool,
}

fn unavailable(e: &dyn std::fmt::Display) -> Refusal {
    Refusal::new(ErrorCode::Unavailable, format!("the store failed: {e}"))
}

fn forbidden(message: &str) -> Refusal {
    Refusal::new(ErrorCode::Forbidden, message)
}

/// Runs the director of `state` (its log read up to `seq`), telling `channel`; it stops
/// at shutdown, when every sender is gone, when told to, or when another node wrote to
/// its log.
pub fn spawn(
    state: Tournament,
    seq: u64,
    deps: Arc<Deps>,
    channel: Arc<Channel>,
) -> mpsc::Sender<Command> {
    let (sender, commands) = mpsc::channel(QUEUE);
    // Subscribed before anything is read from the store, so no result falls between.
    let news = deps.lifecycle.subscribe();
    let director = Director {
        state,
        seq,
        deps,
        channel,
        stale: false,
    };
    tokio::spawn(director.run(commands, news));
    sender
}

impl Director {
    async fn run(
        mut self,
        mut commands: mpsc::Receiver<Command>,
        mut news: broadcast::Receiver<GameNews>,
    ) {
        let id = self.state.id.clone();
        self.catch_up().await;
        let mut stop = self.deps.shutdown.clone();
        let stopped = async move {
            let _ = stop.wait_for(|stop| *stop).await;
        };
        tokio::pin!(stopped);
        let mut poll = tokio::time::interval(RESULTS_POLL);
        poll.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        while !self.stale {
            tokio::select! {
                command = commands.recv() => match command {
                    Some(Command::Stop) | None => break,
                    Some(command) => self.command(command).await,
                },
                heard = news.recv() => match heard {
                    Ok(news) => self.news(news).await,
                    Err(broadcast::error::RecvError::Lagged(_)) => self.catch_up().await,
                    Err(broadcast::error::RecvError::Closed) => break,
                },
                _ = poll.tick() => {
                    if self.state.stage() == crate::protocol::Stage::Playing {
                        self.catch_up().await;
                    }
                }
                () = &mut stopped => break,
            }
        }
        tracing::debug!(tournament = %id, "director stopped");
    }

    async fn command(&mut self, command: Command) {
        match command {
            Command::Request { request, reply } => {
                let answer = match request {
                    Request::Act { user, action } => self.act(user, action).await.map(Reply::Acted),
                    Request::Import { user, players } => {
                        self.import(&user, players).await.map(Reply::Imported)
                    }
                };
                let _ = reply.send(answer.unwrap_or_else(|r| Reply::Refused(r.into())));
            }
            Command::Snapshot { reply } => {
                let _ = reply.send(Box::new(self.state.clone()));
            }
            Command::Stop => {}
        }
    }

    async fn act(&mut self, user: Option<UserInfo>, action: TournamentAction) -> Answer {
        let user = user.ok_or_else(|| {
            Refusal::new(
                ErrorCode::Unauthorized,
                "log in first (a token in ?token= or an `auth` message)",
            )
        })?;
        let entries = self.decide(&user, action)?;
        self.commit(entries).await?;
        self.follow_up().await;
        Ok(None)
    }

    async fn import(&mut self, user: &UserInfo, players: Vec<Newcomer>) -> Result<usize, Refusal> {
        if !self.state.is_director(&user.id) {
            return Err(forbidden("only the tournament's directors may do this"));
        }
        let entries = self.state.import(players)?;
        let new = entries.len();
        self.commit(entries).await?;
        Ok(new)
    }

    /// Who may ask, then what it would record.
    fn decide(&self, user: &UserInfo, action: TournamentAction) -> Result<Vec<Entry>, Refusal> {
        let s = &self.state;
        let director = s.is_director(&user.id);
        let directing = || {
            director
                .then_some(())
                .ok_or_else(|| forbidden("only the tournament's directors may do this"))
        };
        let entry = match action {
            TournamentAction::WatchTournament {} | TournamentAction::UnwatchTournament {} => {
                return Ok(Vec::new());
            }
            TournamentAction::Configure { setup } => {
                directing()?;
                let secrets = fresh_secrets(setup.regulations.rounds);
                s.configure(*setup, secrets)?
            }
            TournamentAction::Register {
                rank,
                club,
                country,
            } => {
                if user.role == crate::protocol::Role::Guest {
                    return Err(forbidden("guests cannot enter tournaments"));
                }
                let rated = self
                    .deps
                    .ranks
                    .of(&user.id)
                    .and_then(|r| r.trim_end_matches('?').parse().ok());
                s.register(user, rank.or(rated), club, country, wall_ms())?
            }
            TournamentAction::Withdraw { player } => {
                let seat = match player {
                    Some(p) if p != user.id => {
                        directing()?;
                        s.player(&p)?
                    }
                    _ => s.player(&user.id)?,
                };
                s.set_status(seat, Status::Withdrawn, String::new())?
            }
            TournamentAction::Disqualify { player, reason } => {
                if !director && !s.is_chief_referee(&user.id) {
                    return Err(forbidden(
                        "only a director or the chief referee may disqualify",
                    ));
                }
                s.set_status(s.player(&player)?, Status::Disqualified, reason)?
            }
            TournamentAction::Bye { player } => {
                directing()?;
                s.ask_bye(s.player(&player)?)?
            }
            TournamentAction::Pair {} => {
                directing()?;
                s.pair()?
            }
            TournamentAction::Swap { a, b } => {
                directing()?;
                s.swap(s.player(&a)?, s.player(&b)?)?
            }
            TournamentAction::Publish {} => {
                directing()?;
                s.publish(wall_ms(), new_id)?
            }
            TournamentAction::Adjust {
                player,
                points,
                reason,
            } => {
                directing()?;
                s.adjust(s.player(&player)?, points, reason)?
            }
            TournamentAction::Appeal { message } => s.appeal(&user.id, message, wall_ms())?,
            TournamentAction::RuleAppeal { appeal, ruling } => {
                if !s.is_chief_referee(&user.id) {
                    return Err(forbidden("only the chief referee rules on appeals"));
                }
                s.rule_appeal(&user.id, appeal, ruling)?
            }
        };
        Ok(vec![entry])
    }

    /// Writes `entries` to the log, then applies them, tells the watchers, and starts
    /// the games of a published round. On a refusal nothing changed.
    async fn commit(&mut self, entries: Vec<Entry>) -> Result<(), Refusal> {
        if entries.is_empty() {
            return Ok(());
        }
        let mut next = self.state.clone();
        let mut rows = Vec::with_capacity(entries.len());
        for (i, entry) in entries.iter().enumerate() {
            next.apply(entry);
            rows.push(TournamentEntry {
                seq: self.seq + 1 + i as u64,
                at_ms: wall_ms(),
                kind: entry.kind().to_string(),
                payload: serde_json::to_string(entry).map_err(|e| unavailable(&e))?,
            });
        }
        let stage = super::stage_name(next.stage());
        let (store, id) = (self.deps.store.clone(), self.state.id.clone());
        let appended =
            tokio::task::spawn_blocking(move || store.append_tournament(&id, &rows, stage))
                .await
                .map_err(|e| unavailable(&e))?;
        if let Err(e @ StoreError::TournamentOutOfOrder { .. }) = &appended {
            tracing::warn!(tournament = %self.state.id, error = %e, "another node directs this tournament now; stopping here");
            self.stale = true;
        }
        appended.map_err(|e| unavailable(&e))?;
        self.seq += entries.len() as u64;
        self.state = next;
        let mut standings = false;
        for entry in &entries {
            standings |= self.tell(entry);
            if let Entry::Published { round, .. } = entry {
                self.start_round(usize::from(*round) - 1).await;
            }
        }
        if standings {
            self.standings_changed();
        }
        Ok(())
    }

    /// Tells `msg` to the watchers of the tournament's channel, on every node.
    fn broadcast(&mut self, msg: &ServerMsg) {
        self.channel.tell(&self.state.id, encode(msg));
    }

    fn standings_changed(&mut self) {
        let msg = ServerMsg::StandingsChanged {
            tournament_id: self.state.id.clone(),
            standings: self.state.standings_view(),
        };
        self.broadcast(&msg);
    }

    /// The channel's events for an entry just applied; whether it changed the standings
    /// (told once for all the entries of a commit).
    fn tell(&mut self, entry: &Entry) -> bool {
        let id = self.state.id.clone();
        match entry {
            Entry::Registered { .. } | Entry::StatusChanged { .. } => {
                let seat = match entry {
                    Entry::StatusChanged { seat, .. } => Some(*seat),
                    Entry::Registered { user, .. } => self.state.seat_of(&user.id),
                    _ => None,
                };
                if let Some(seat) = seat {
                    let player = self.state.player_view(seat);
                    self.broadcast(&ServerMsg::RegistrationChanged {
                        tournament_id: id,
                        player,
                    });
                }
                true
            }
            Entry::Paired { round, .. } | Entry::Published { round, .. } => {
                let Some(view) = self.state.round_view(usize::from(*round) - 1, false) else {
                    return false;
                };
                let msg = match entry {
                    Entry::Paired { .. } => ServerMsg::RoundPaired {
                        tournament_id: id,
                        round: view,
                    },
                    _ => ServerMsg::RoundStarted {
                        tournament_id: id,
                        round: view,
                    },
                };
                self.broadcast(&msg);
                let published = matches!(entry, Entry::Published { .. });
                if published {
                    self.tell_players(usize::from(*round) - 1);
                }
                published
            }
            Entry::Result {
                round,
                board,
                outcome,
            } => {
                let game_id = self.state.played[usize::from(*round) - 1].games[*board].clone();
                self.broadcast(&ServerMsg::BoardResult {
                    tournament_id: id,
                    round: *round,
                    board: u16::try_from(board + 1).unwrap_or(u16::MAX),
                    game_id,
                    outcome: *outcome,
                });
                true
            }
            Entry::Adjusted { .. } => true,
            Entry::Appealed { .. } | Entry::AppealRuled { .. } => {
                let appeal = match entry {
                    Entry::AppealRuled { appeal, .. } => self
                        .state
                        .appeals
                        .iter()
                        .find(|a| a.appeal == *appeal)
                        .cloned(),
                    _ => self.state.appeals.last().cloned(),
                };
                if let Some(appeal) = appeal {
                    self.broadcast(&ServerMsg::AppealChanged {
                        tournament_id: id,
                        appeal,
                    });
                }
                false
            }
            Entry::Configured { .. } => {
                self.broadcast(&ServerMsg::SetupChanged {
                    tournament_id: id,
                    setup: Box::new(self.state.setup.clone()),
                    draws: self.state.draws(),
                });
                // The tie-breaks, or the system, may be others now.
                true
            }
            Entry::ByeAsked { seat } => {
                let round = self.state.played.len() + 1;
                self.broadcast(&ServerMsg::ByeGiven {
                    tournament_id: id,
                    player: self.state.users[*seat].id.clone(),
                    round: u8::try_from(round).unwrap_or(u8::MAX),
                });
                false
            }
            Entry::Created { .. } | Entry::Finished {} => false,
        }
    }

    /// A `round_paired` notice to each player of published round `index` (0-based): their
    /// game and opponent, or only the round for a bye.
    fn tell_players(&self, index: usize) {
        let round = u32::try_from(index + 1).ok();
        let notice = |game_id: Option<&String>, opponent: Option<&UserInfo>| NoticePayload {
            tournament_id: Some(self.state.id.clone()),
            round,
            game_id: game_id.cloned(),
            opponent: opponent.cloned(),
            ..NoticePayload::default()
        };
        let users = &self.state.users;
        let played = &self.state.played[index];
        for (board, game) in self.state.record.rounds[index]
            .boards
            .iter()
            .zip(&played.games)
        {
            for (me, them) in [(board.black, board.white), (board.white, board.black)] {
                let payload = notice(Some(game), Some(&users[them]));
                (self.deps.notices).notify(&users[me].id, NoticeKind::RoundPaired, payload);
            }
        }
        for &bye in &self.state.record.rounds[index].byes {
            let payload = notice(None, None);
            (self.deps.notices).notify(&users[bye].id, NoticeKind::RoundPaired, payload);
        }
    }

    /// Creates the games of published round `index` that do not exist yet (all of
    /// them, but after a restart between the commit and the starts).
    async fn start_round(&mut self, index: usize) {
        let (store, played) = (self.deps.store.clone(), self.state.played[index].clone());
        let games = played.games.clone();
        let exists = tokio::task::spawn_blocking(move || {
            games
                .iter()
                .map(|g| store.game(g).map(|r| r.is_some()))
                .collect::<Result<Vec<bool>, StoreError>>()
        })
        .await;
        let Ok(Ok(exists)) = exists else {
            tracing::error!(tournament = %self.state.id, "cannot read which games of a round exist");
            return;
        };
        let round = u8::try_from(index + 1).unwrap_or(u8::MAX);
        for (i, p) in played.boards.iter().enumerate() {
            if exists[i] {
                continue;
            }
            let mut settings = self.state.setup.settings.clone();
            settings.handicap = p.board.handicap;
            if p.board.handicap > 0 {
                settings.komi = None;
            }
            settings.start_at = Some(played.start_at);
            settings.fair_play = FairPlay::Tournament;
            settings.referee = played.referees[i].clone();
            // A tournament forbids vacation (issue 39): its rounds keep one pace.
            settings.vacation = false;
            let nigiri = p.nigiri.then(|| self.nigiri_proof(round, i));
            let seating = Seating {
                id: played.games[i].clone(),
                players: [
                    self.state.users[p.board.black].clone(),
                    self.state.users[p.board.white].clone(),
                ],
                settings,
                nigiri,
            };
            if let Err(refusal) = self.deps.starter.start(seating, || {}).await {
                tracing::error!(tournament = %self.state.id, game = %played.games[i], %refusal, "a tournament game did not start");
            }
        }
    }

    /// The proof of the nigiri at board `board` (0-based) of `round`: the round's
    /// commitment, shown from the start, its secret, and the colour it gave the first
    /// named of the proposal (the "challenger").
    fn nigiri_proof(&self, round: u8, board: usize) -> NigiriProof {
        let draw = &self.state.draws()[usize::from(round) - 1];
        let seed = nigiri_seed(&self.state.id, round, board + 1);
        let secret = hex::decode(draw.secret.as_deref().unwrap_or_default()).unwrap_or_default();
        NigiriProof {
            commitment: draw.commitment.clone(),
            secret: hex::encode(&secret),
            challenger: crate::lobby::nigiri::draw(&secret, &seed),
            seed,
        }
    }

    /// A game's news: a result for one of our boards.
    async fn news(&mut self, news: GameNews) {
        let (game_id, result) = match news {
            GameNews::Ended(summary) => match summary.result {
                Some(result) => (summary.game_id, result),
                None => return,
            },
            GameNews::ResultChanged {
                game_id, result, ..
            } => (game_id, result),
            GameNews::Started { .. } | GameNews::YourMove { .. } => return,
        };
        self.record_result(&game_id, &result).await;
    }

    async fn record_result(&mut self, game_id: &str, result: &GameResult) {
        let Some(entry) = self.state.result(game_id, outcome_of(result)) else {
            return;
        };
        if let Err(refusal) = self.commit(vec![entry]).await {
            tracing::error!(tournament = %self.state.id, game = %game_id, %refusal, "a result was not recorded");
            return;
        }
        self.follow_up().await;
    }

    /// Reads from the store the results of our games that ended unheard (while this
    /// task was not running, or fell behind the bus), and starts games not created yet.
    async fn catch_up(&mut self) {
        if let Some(index) = self.state.played.len().checked_sub(1) {
            self.start_round(index).await;
        }
        let open: Vec<String> = self
            .state
            .played
            .iter()
            .enumerate()
            .flat_map(|(r, p)| {
                let round = &self.state.record.rounds[r];
                p.games
                    .iter()
                    .enumerate()
                    .filter(|&(b, _)| round.boards[b].outcome.is_none())
                    .map(|(_, g)| g.clone())
                    .collect::<Vec<_>>()
            })
            .collect();
        let store = self.deps.store.clone();
        let read = tokio::task::spawn_blocking(move || {
            open.into_iter()
                .filter_map(|g| {
                    let result = store.game(&g).ok()??.result?;
                    Some((g, result.parse::<GameResult>().ok()?))
                })
                .collect::<Vec<_>>()
        })
        .await;
        for (game_id, result) in read.unwrap_or_default() {
            self.record_result(&game_id, &result).await;
        }
        self.follow_up().await;
    }

    /// What follows by itself: the end of the tournament, or (when the regulations say
    /// so) the next round paired and published once the last one is over.
    async fn follow_up(&mut self) {
        if let Some(finished) = self.state.finish() {
            let _ = self.commit(vec![finished]).await;
            return;
        }
        if !self.state.setup.auto_pair || self.state.stage() != crate::protocol::Stage::Ready {
            return;
        }
        let paired = match self.state.pair() {
            Ok(paired) => paired,
            Err(refusal) => {
                tracing::warn!(tournament = %self.state.id, %refusal, "the next round could not be paired by itself");
                return;
            }
        };
        if self.commit(vec![paired]).await.is_err() {
            return;
        }
        if let Ok(published) = self.state.publish(wall_ms(), new_id) {
            let _ = self.commit(vec![published]).await;
        }
    }
}
